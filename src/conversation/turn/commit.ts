import { contextKey } from "../../core/attachments";
import { ok, type Result } from "../../core/problem";
import { recordDecisions } from "../approvals";
import type { ConversationDb } from "../store";
import { storeAdmitted } from "../tool-results";
import { addSearchedEvent, recordToolRun, resultSeqs } from "../tool-runs";
import type { Assembled } from "./assemble";
import type { AssemblyDraft } from "./view-assembly";
import type { Compacted } from "./compact";
import type { StoredTurnResult } from "./options";
import type { StageRecord, Staged } from "./stage";

export interface Committed {
  /** The seqs of the messages the model read, this turn's own included, as stored. */
  shown: number[];
}

/**
 * Everything the turn changes, in one transaction: the agent and identity, attachments, the results and stand-ins, the
 * decisions, the user's message, the ledger, the turn record (for replays) and its events. `trace` is the pipeline so
 * far: the stored evidence carries it, this stage included.
 */
export function commit(d: AssemblyDraft & Compacted & Assembled, trace: readonly StageRecord[]): Result<Staged<Committed>> {
  const { scope, agent, assembly, result, rendered, view } = d;
  const { db: store, meta } = scope;
  const at = d.now.toISOString();
  let shown: number[] = [];
  store.transaction(() => {
    if (meta.agent !== agent.id || JSON.stringify([meta.agentContexts, meta.resultPolicies]) !== JSON.stringify([agent.attachedContexts, agent.resultPolicies])) {
      store.conversation.setAgent(agent.id, agent.attachedContexts, agent.resultPolicies);
    }
    if (meta.identity === null || d.switching) store.conversation.setIdentity(d.identity, agent.id);
    for (const a of d.added) store.attachments.attach(contextKey(a.ref, a.itemId), a.ref, a.itemId, at);
    const seqs = [...rendered.seqs];
    storeAdmitted(store, d.turnId, d.admitted, at, seqs);
    recordDecisions(store, scope.db.approvals, d.openCalls, d.decisions.decided, d.turnId, at);
    scope.db.approvals.expireAwaiting(d.openCalls, at);
    shown = assembly.historyShown.map((index) => seqs[index]!);
    // Results read as stand-ins are this turn's own mostly: their seqs are known once stored. A replay shows them so again.
    const notShown = assembly.standIns.map((s) => ({ seq: seqs[s.index]!, toolCallId: s.toolCallId, tool: s.tool, tokens: s.tokens }));
    if (notShown.length) result.envelope.tools = { ...result.envelope.tools!, notShown };
    if (assembly.userMessage) shown.push(store.messages.append(d.turnId, assembly.userMessage, at));
    if (d.switching) store.conversation.setPersonaSeq(shown.at(-1)!);
    const lastSeq = shown.at(-1) ?? seqs.at(-1) ?? 0;
    // A budget that left out the message carrying a context's injection took the context out of view with it.
    store.ledger.forgetOutside(new Set(shown));
    for (const entry of assembly.ledger.upserts) store.ledger.record(entry, d.turnId, lastSeq, at);
    for (const gone of assembly.ledger.deletes) store.ledger.forget(gone.kind, gone.key);
    const inView = new Set(shown);
    recordToolRun(store, scope.db.toolState, d.toolRun, resultSeqs(d.admitted.messages, seqs.slice(rendered.seqs.length)), (seq) => inView.has(seq), d.turnId, at);
    recordDelegations(d, seqs.slice(rendered.seqs.length), at);
    result.envelope.stages = [...trace, { stage: "commit", ms: 0, decided: { stored: d.admitted.messages.length + (assembly.userMessage ? 1 : 0), ledger: assembly.ledger.upserts.length + assembly.ledger.deletes.length } }];
    store.turns.save({ turnId: d.turnId, requestDigest: d.requestDigest, systemPrompt: assembly.messages[0]!.content as string, userSeq: lastSeq, historyView: seqRanges(shown), compactionId: view.compactionId, result: JSON.stringify(result) }, at);
    if (d.typed?.redactions.length) store.events.add(d.turnId, "message.redacted", null, { redactions: d.typed.redactions }, at);
    if (result.envelope.contexts) store.events.add(d.turnId, "context.redacted", null, { redactions: result.envelope.contexts.redactions }, at);
    recordTurnEvents(store, result, assembly.messages.length, at, d.continuation);
  });
  return ok({ out: { shown }, decided: {} });
}

/**
 * The subagents this turn started, each with the message that made its call (ids may repeat across messages); and the
 * running ones whose calls a new message closed before their answer came: abandoned.
 */
function recordDelegations(d: AssemblyDraft & Compacted & Assembled, ownSeqs: readonly number[], at: string): void {
  const { db: store } = d.scope;
  const { delegations } = store;
  if (d.delegated.length) {
    const index = d.admitted.messages.findIndex((m) => m.role === "assistant" && (m.tool_calls ?? []).some((c) => c.id === d.delegated[0]!.toolCallId));
    const callSeq = ownSeqs[index]!;
    for (const c of d.delegated) {
      delegations.started({ toolCallId: c.toolCallId, callSeq, childConversationId: c.childConversationId, agent: c.agent, depth: c.depth, turnId: d.turnId, childTurnId: c.turnId }, at);
      store.events.add(d.turnId, "delegation.started", c.childConversationId, { toolCallId: c.toolCallId, agent: c.agent, depth: c.depth, childTurnId: c.turnId }, at);
    }
  }
  const closed = d.unanswered.map((c) => c.id);
  if (closed.length && d.openCalls.calls.size) {
    for (const child of delegations.abandoned(closed, d.openCalls.seq, at)) store.events.add(d.turnId, "delegation.abandoned", child, {}, at);
  }
}

/** Ascending seqs as [from, to] runs. */
function seqRanges(seqs: readonly number[]): [number, number][] {
  const ranges: [number, number][] = [];
  for (const seq of seqs) {
    const last = ranges.at(-1);
    if (last && seq === last[1] + 1) last[1] = seq;
    else ranges.push([seq, seq]);
  }
  return ranges;
}

function recordTurnEvents(store: ConversationDb, result: StoredTurnResult, messageCount: number, at: string, continuation: boolean): void {
  const { envelope } = result;
  for (const i of envelope.injection) {
    const type = i.marker === "removed" ? "context.removed" : "context.injection.applied";
    store.events.add(result.turnId, type, i.id, { kind: i.kind, marker: i.marker }, at);
  }
  for (const m of result.missing) store.events.add(result.turnId, "context.missing", m.id, { reason: m.reason, detail: m.detail }, at);
  for (const c of envelope.tools?.unanswered ?? []) store.events.add(result.turnId, "tool.call.unanswered", c.id, { tool: c.name, ...(c.awaitingApproval ? { awaitingApproval: true } : {}) }, at);
  // A continuation's notes name the user message they follow: the next message does not repeat them.
  const after = continuation ? { continuation: true, userSeq: store.messages.lastUserSeq() } : {};
  for (const r of envelope.reminders ?? []) store.events.add(result.turnId, "reminder.fired", r.kind, { kind: r.kind, reason: r.reason, ...after }, at);
  for (const r of envelope.tools?.ran ?? []) store.events.add(result.turnId, "tool.call.ran", r.toolCallId, { tool: r.tool, servedBy: r.servedBy, outcome: r.outcome, ms: r.ms }, at);
  // Denials say who and why (docs/tools.md, "The guard"; docs/hooks.md).
  for (const r of envelope.tools?.ran ?? []) {
    if (r.outcome === "denied") store.events.add(result.turnId, "tool.call.denied", r.toolCallId, { tool: r.tool, servedBy: r.servedBy, by: r.deniedBy ?? "guard", reason: r.reason }, at);
  }
  // A hook that did not answer is worth finding without reading every turn's evidence.
  for (const h of envelope.hooks?.calls ?? []) if (h.failed) store.events.add(result.turnId, "hook.failed", h.hook, { point: h.point, failed: h.failed, verdict: h.verdict, ms: h.ms }, at);
  for (const l of envelope.tools?.loaded ?? []) store.events.add(result.turnId, "tool.loaded", l.name, { query: l.query, toolCallId: l.toolCallId }, at);
  for (const s of envelope.tools?.searched ?? []) addSearchedEvent(store, result.turnId, s, at);
  for (const t of envelope.budget.truncations) store.events.add(result.turnId, "context.truncated", t.id, { kind: t.kind, priority: t.priority, tokens: t.tokens }, at);
  store.events.add(result.turnId, "turn.assembled", result.agent.id, { usage: result.usage }, at);
  // The contract's name for what a request now includes: message and token counts, and the contexts injected.
  const sources = envelope.injection.filter((i) => i.marker !== "removed").map((i) => i.id);
  store.events.add(result.turnId, "context.include", null, { messageCount, tokens: result.usage.total, sources }, at);
}
