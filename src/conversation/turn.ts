import type { Attachment, TurnBody } from "../api/schemas";
import { assembleTurn } from "../core/assemble";
import { withAges } from "../core/ages";
import { contextKey } from "../core/attachments";
import { renderIdentity, renderPersonaSwitch } from "../core/identity";
import type { Observation } from "../core/ledger";
import { LIMITS } from "../core/limits";
import type { AppendableMessage, ChatMessage } from "../core/messages";
import { fail, ok, type Result } from "../core/problem";
import { sha256Hex } from "../core/version";
import type { AppHub } from "../hub/app-hub";
import type { TurnResult } from "../protocol/frontend";
import type { ConversationMeta, ConversationStore, TurnRecord } from "./store";
import { admitMessages, inCallOrder, type AdmittedMessages } from "./tool-results";
import type { TurnSections } from "./turn-sections";

export interface TurnDeps {
  store: ConversationStore;
  hub: DurableObjectStub<AppHub>;
  meta: ConversationMeta;
  auditKey: CryptoKey;
  now: () => Date;
  /** Memory and task state for this turn's appendix, read by the caller (KV, R2). */
  sections?: (agent: { memory: boolean }) => Promise<TurnSections>;
}

type StoredTurnResult = Omit<TurnResult, "messages" | "replayed">;

/** What stands in for a result that never came, so the model never reads a call without an answer. */
export const UNANSWERED_RESULT = "[no result: this tool call was not answered before the conversation moved on]";

/**
 * One turn: replay if already answered; else admit the tool results it carries,
 * pull and diff the contexts (not on a continuation), assemble within the
 * budget, and persist it all at once.
 */
export async function takeTurn(deps: TurnDeps, body: TurnBody): Promise<Result<TurnResult>> {
  const { store, hub, meta } = deps;
  const { turnId: givenId, ...request } = body;
  const turnId = givenId ?? crypto.randomUUID();
  const requestDigest = await sha256Hex(JSON.stringify(request));

  const prior = store.turn(turnId);
  if (prior) {
    return prior.requestDigest === requestDigest ? ok(replay(store, prior)) : fail("conflict", `turnId '${turnId}' was already used for a different request`);
  }
  if (meta.endedAt) return fail("conflict", "this conversation has ended");

  const continuation = body.message === undefined;
  const added = body.attachments?.length ? await newAttachments(deps, body.attachments) : ok([]);
  if (!added.ok) return added;
  const runtime = [...store.attachments().map((a) => ({ ref: a.context, itemId: a.itemId })), ...added.value];
  const prepared = await hub.prepareTurn(meta.conversationId, body.agent, continuation ? null : runtime);
  if (!prepared) return fail("not-found", `no agent '${body.agent}' is registered; an app creates it with agents/create`);
  const { agent, pulled } = prepared;

  const open = store.openToolCalls();
  const callOrder = new Map([...open.keys()].map((id, i) => [id, i]));
  const results: AppendableMessage[] = (body.toolResults ?? []).map((r) => ({ role: "tool", ...r }));
  const admitted = await admitMessages(open, results, { policies: agent.resultPolicies, auditKey: deps.auditKey });
  if (!admitted.ok) return admitted;
  for (const m of admitted.value.messages) if (m.role === "tool") open.delete(m.tool_call_id);
  const unanswered = [...open].map(([id, name]) => ({ id, name }));
  const closing: AppendableMessage[] = unanswered.map((c) => ({ role: "tool", tool_call_id: c.id, content: UNANSWERED_RESULT }));

  const resources: Observation[] = store.resources().map((r) => ({ key: r.fullId, kind: "resource", status: "present", title: r.title, version: r.version, content: r.content }));
  const extra: TurnSections = !continuation && deps.sections ? await deps.sections(agent) : { sections: [], omitted: [] };
  const stored = store.messages();
  // Stand-ins take their calls' places among the results, so every call is followed by its answers in order.
  const fresh = inCallOrder([...admitted.value.messages, ...closing], callOrder);
  const now = deps.now();
  // The identity block is frozen at the first turn; a later agent brings its persona as a note on the user's message.
  const identity = meta.identity ?? renderIdentity(agent.systemPrompt, now);
  const switching = !continuation && meta.personaAgent !== null && meta.personaAgent !== agent.id;
  const assembled = assembleTurn({
    turnId,
    conversationId: meta.conversationId,
    now,
    systemPrompt: identity,
    personaNote: switching ? renderPersonaSwitch(agent) : undefined,
    history: [...withAges(stored, now), ...fresh],
    userText: body.message,
    currentFrom: stored.length,
    ledger: store.ledger(),
    observations: [...pulled, ...resources],
    sections: extra.sections,
    maxTokens: body.budget?.maxTokens,
  });
  if (!assembled.ok) return assembled;
  const assembly = assembled.value;
  const memoryMissing = extra.memoryError ? [{ id: "memory", reason: "error" as const, detail: extra.memoryError, severity: "warning" as const }] : [];
  const envelope = {
    ...assembly.envelope,
    missing: [...assembly.envelope.missing, ...memoryMissing],
    selection: { ...assembly.envelope.selection, omitted: [...assembly.envelope.selection.omitted, ...extra.omitted] },
    tools: { unanswered, results: admitted.value.reports },
  };
  const result: StoredTurnResult = {
    turnId,
    conversationId: meta.conversationId,
    agent: { id: agent.id, name: agent.name, tools: agent.tools },
    usage: assembly.usage,
    missing: [...assembly.missing, ...memoryMissing],
    envelope,
  };

  const at = now.toISOString();
  store.transaction(() => {
    if (meta.agent !== agent.id || JSON.stringify([meta.agentContexts, meta.resultPolicies]) !== JSON.stringify([agent.attachedContexts, agent.resultPolicies])) {
      store.setAgent(agent.id, agent.attachedContexts, agent.resultPolicies);
    }
    if (meta.identity === null || switching) store.setIdentity(identity, agent.id);
    for (const a of added.value) store.attach(contextKey(a.ref, a.itemId), a.ref, a.itemId, at);
    const seqs = stored.map((m) => m.seq);
    storeAdmitted(store, turnId, { messages: fresh, reports: admitted.value.reports }, at, seqs);
    const shown = assembly.historyShown.map((index) => seqs[index]!);
    if (assembly.userMessage) shown.push(store.appendMessage(turnId, assembly.userMessage, at));
    const lastSeq = shown.at(-1) ?? seqs.at(-1) ?? 0;
    for (const entry of assembly.ledger.upserts) store.recordInjection(entry, turnId, lastSeq, at);
    for (const gone of assembly.ledger.deletes) store.forget(gone.kind, gone.key);
    store.saveTurn({ turnId, requestDigest, systemPrompt: identity, userSeq: lastSeq, historyView: seqRanges(shown), result: JSON.stringify(result) }, at);
    recordTurnEvents(store, result, at);
  });
  return ok({ ...result, messages: assembly.messages, replayed: false });
}

/** Appends admitted messages and records what protecting each tool result did (rules and keyed hashes, never values). */
export function storeAdmitted(store: ConversationStore, turnId: string | null, admitted: AdmittedMessages, at: string, seqs: number[] = []): number {
  for (const m of admitted.messages) seqs.push(store.appendMessage(turnId, m, at));
  for (const r of admitted.reports) {
    if (r.redactions.length) store.addEvent(turnId, "tool.result.redacted", r.toolCallId, { tool: r.tool, redactions: r.redactions }, at);
    if (r.trimmed) store.addEvent(turnId, "tool.result.trimmed", r.toolCallId, { tool: r.tool, ...r.trimmed }, at);
  }
  const lastSeq = seqs.at(-1) ?? 0;
  if (admitted.messages.length) store.addEvent(turnId, "messages.appended", null, { count: admitted.messages.length, lastSeq }, at);
  return lastSeq;
}

/** The answer stored for `prior`: its result, and exactly the stored messages its model input held. */
function replay(store: ConversationStore, prior: TurnRecord): TurnResult {
  const stored = JSON.parse(prior.result) as StoredTurnResult;
  const ranges = prior.historyView.length ? prior.historyView : [[1, prior.userSeq] as [number, number]];
  const history: ChatMessage[] = withAges(ranges.flatMap(([from, to]) => store.messages(to, from)), new Date(stored.envelope.createdAt));
  return { ...stored, messages: [{ role: "system", content: prior.systemPrompt }, ...history], replayed: true };
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

/** Attachments riding in the turn body: checked against the registry, never fetched twice. */
async function newAttachments(deps: TurnDeps, attachments: readonly Attachment[]): Promise<Result<{ ref: string; itemId?: string }[]>> {
  const existing = new Set(deps.store.attachments().map((a) => a.key));
  const fresh = attachments.filter((a) => !existing.has(contextKey(a.context, a.itemId)));
  if (existing.size + fresh.length > LIMITS.attachmentsPerConversation) {
    return fail("limit-exceeded", `a conversation may have at most ${LIMITS.attachmentsPerConversation} attachments`);
  }
  for (const a of fresh) {
    const checked = await checkAttachable(deps.hub, a);
    if (!checked.ok) return checked;
  }
  return ok(fresh.map((a) => (a.itemId === undefined ? { ref: a.context } : { ref: a.context, itemId: a.itemId })));
}

export async function checkAttachable(hub: DurableObjectStub<AppHub>, a: Attachment): Promise<Result<true>> {
  const provider = await hub.provider(a.context);
  if (!provider) return fail("not-found", `no app has registered provider '${a.context}'`);
  const method = a.itemId === undefined ? "current" : "get";
  if (!provider.methods.includes(method)) {
    return fail("invalid-request", `'${a.context}' cannot be attached ${a.itemId === undefined ? "without" : "with"} an itemId: it does not implement '${method}'`);
  }
  return ok(true);
}

function recordTurnEvents(store: ConversationStore, result: StoredTurnResult, at: string): void {
  const { envelope } = result;
  for (const i of envelope.injection) {
    const type = i.marker === "removed" ? "context.removed" : "context.injection.applied";
    store.addEvent(result.turnId, type, i.id, { kind: i.kind, marker: i.marker }, at);
  }
  for (const m of result.missing) store.addEvent(result.turnId, "context.missing", m.id, { reason: m.reason, detail: m.detail }, at);
  for (const c of envelope.tools?.unanswered ?? []) store.addEvent(result.turnId, "tool.call.unanswered", c.id, { tool: c.name }, at);
  for (const t of envelope.budget.truncations) store.addEvent(result.turnId, "context.truncated", t.id, { kind: t.kind, priority: t.priority, tokens: t.tokens }, at);
  store.addEvent(result.turnId, "turn.assembled", result.agent.id, { usage: result.usage }, at);
}
