import { LIMITS } from "../protocol/limits";
import { neutralize } from "../core/neutralize";
import { fail, ok, type Result } from "../core/problem";
import type { TrimPolicy } from "../protocol/policies";
import type { AppendableMessage } from "../protocol/messages";
import type { Toolbox, ToolRunResult } from "../protocol/tools";
import { modelToolName } from "../tools/model-names";
import type { HookScope } from "../hooks/chain";
import { runCalls, servedCalls, type ToolRunReport } from "../tools/run";
import type { ModelCall } from "../tools/calls";
import { TOOLS_RUN_PREFIX } from "./message-store";
import { checkRoom } from "./capacity";
import type { OpenCalls } from "./message-store";
import type { ConversationDb } from "./store";
import type { ToolStateStore } from "./tool-state-store";
import { admitMessages, storeAdmitted } from "./tool-results";
import { offersHistorySearch } from "./history-search-store";
import { toolHost, type ConversationScope } from "./scope";
import type { RunToolsBody } from "../protocol/http";
import type { HistorySearched } from "../protocol/evidence";

/** The stored open calls with their arguments: the message that made them holds those. */
export function storedCalls(store: ConversationDb, open: OpenCalls): ModelCall[] {
  if (open.calls.size === 0) return [];
  const made = store.messages.list(open.seq, open.seq)[0]?.message;
  const args = new Map(made?.role === "assistant" ? (made.tool_calls ?? []).map((c) => [c.id, c.function.arguments]) : []);
  return [...open.calls].map(([id, name]) => ({ id, name, arguments: args.get(id) ?? "{}" }));
}

/**
 * Trim policies by the name the model calls a tool: an agent names its tools `app:tool`, or bare for its own app's
 * (and a bare name also covers a frontend's own tool of that name).
 */
export function policiesByModelName(policies: Record<string, TrimPolicy>, app: string, toolbox: Toolbox): Record<string, TrimPolicy> {
  const served = new Set([...toolbox.bound, ...toolbox.catalog].map((t) => t.name));
  const byName: Record<string, TrimPolicy> = {};
  for (const [name, policy] of Object.entries(policies)) {
    const qualified = name.includes(":") ? name : `${app}:${name}`;
    if (served.has(qualified)) byName[modelToolName(qualified)] = policy;
    if (!name.includes(":")) byName[name] = policy;
  }
  return byName;
}

/**
 * What the runtime's own tools changed, inside the caller's transaction: tools loaded from the catalog join the
 * conversation's set; a skill read is linked to the message holding its manual; a context the model read is attached,
 * like the user's pick from the + menu, and the ledger records the version it read in that message (while the model
 * can see it), so it is injected again only once it changes.
 */
export function recordToolRun(
  store: ConversationDb,
  toolState: ToolStateStore,
  report: ToolRunReport,
  seqOf: ReadonlyMap<string, number>,
  inView: (seq: number) => boolean,
  turnId: string,
  at: string,
): void {
  toolState.load(report.loaded, turnId, at);
  for (const skill of report.linked) toolState.link(skill.name, seqOf.get(skill.toolCallId)!, turnId, at);
  for (const read of report.contextsRead) {
    const seq = seqOf.get(read.toolCallId)!;
    const attachments = store.attachments.list();
    const known = attachments.some((a) => a.key === read.key);
    if (!known && attachments.length >= LIMITS.attachmentsPerConversation) continue;
    if (!known && store.attachments.attach(read.key, read.ref, read.itemId, at)) store.events.add(turnId, "attachment.added", read.key, { by: "model" }, at);
    if (inView(seq)) store.ledger.record({ key: read.key, kind: "context", title: read.title, version: read.version }, turnId, seq, at);
  }
}

/** A search_history call, as an event: its query (redacted already) and the seqs it found, best first. */
export function addSearchedEvent(store: ConversationDb, turnId: string, searched: HistorySearched, at: string): void {
  store.events.add(turnId, "history.searched", searched.toolCallId, { query: searched.query, hits: searched.hits.map((h) => h.seq) }, at);
}

/** The seq each stored tool result got, by its call: `seqs` are the seqs of `messages`, in order. */
export function resultSeqs(messages: readonly AppendableMessage[], seqs: readonly number[]): Map<string, number> {
  return new Map(messages.flatMap((m, i) => (m.role === "tool" ? [[m.tool_call_id, seqs[i]!] as const] : [])));
}

/**
 * Runs the open calls the runtime serves outside a turn (`POST …/tools/run`): each result passes the tool-result
 * envelope and is stored, as if the frontend had appended it. Calls waiting for the user's approval are not run.
 */
export async function runOpenCalls(scope: ConversationScope, body: RunToolsBody): Promise<Result<ToolRunResult>> {
  const { db: store, meta } = scope;
  // The run's one clock reading, taken as it starts: what it stores carries it, as a turn's rows carry its own.
  const at = scope.now().toISOString();
  const agent = body.agent ?? meta.agent;
  if (agent === null) return fail("conflict", "this conversation has no agent yet: name one in `agent`");
  const toolbox = await scope.apps.toolbox(agent);
  if (!toolbox) return fail("not-found", `no agent '${agent}' is registered`);
  const only = body.toolCallIds;
  const open = store.messages.openCalls();
  const awaiting = store.approvals.awaiting(open);
  const wanted = only && new Set(only);
  // A `delegate` call whose subagent is at work gets its result from the child, never from a run here.
  const delegating = new Set([...open.calls.keys()].filter((id) => store.delegations.runningFor(id, open.seq)));
  for (const id of only ?? []) {
    if (!open.calls.has(id)) return fail("conflict", `no open tool call '${id}': its result came, or a new message closed it`);
    if (awaiting.has(id)) return fail("conflict", `tool call '${id}' is waiting for the user's approval`);
    if (delegating.has(id)) return fail("conflict", `tool call '${id}' is waiting for its subagent's final answer`);
  }
  const pending = storedCalls(store, open).filter((c) => !delegating.has(c.id) && (wanted ? wanted.has(c.id) : !awaiting.has(c.id)));
  const history = offersHistorySearch(toolbox.agent, store.compactions.everCovered()) ? store.searchIndex : undefined;
  const served = servedCalls(pending, toolbox, history);
  const unserved = wanted && pending.find((c) => !served.includes(c));
  if (unserved) return fail("invalid-request", `the runtime does not serve '${unserved.name}' (call '${unserved.id}'): its result comes from the frontend`);
  if (served.length === 0) return ok({ ran: [], toolResults: [], appended: 0, lastSeq: store.messages.lastSeq() });
  // Stored like a turn's work, under an id of its own: the ledger, the events and the hooks name what wrote them.
  const runId = `${TOOLS_RUN_PREFIX}${crypto.randomUUID()}`;
  const tools = toolHost(scope);
  const hooks: HookScope = { host: tools, conversationId: meta.conversationId, turnId: runId, agent: toolbox.agent.id, hooks: toolbox.hooks ?? [], log: [] };
  const report = await runCalls(served, { toolbox, loaded: store.toolState.loaded(), host: tools, conversationId: meta.conversationId, neutralize: (text) => neutralize(text, meta.nonce), hooks, request: store.messages.lastUserText(), history });
  const messages = report.results.map((r): AppendableMessage => ({ role: "tool", tool_call_id: r.toolCallId, content: r.content }));
  const admitted = await admitMessages(open.calls, messages, {
    policies: policiesByModelName(toolbox.agent.resultPolicies, toolbox.agent.app, toolbox),
    auditKey: await scope.auditKey(),
    nonce: meta.nonce,
    awaitingApproval: awaiting,
    runtimeWritten: new Set(report.results.filter((r) => r.runtimeWritten).map((r) => r.toolCallId)),
  });
  if (!admitted.ok) return admitted;
  const room = checkRoom(store.messages, admitted.value.messages);
  if (!room.ok) return room;
  const lastSeq = store.transaction(() => {
    const seqs: number[] = [];
    const last = storeAdmitted(store, runId, admitted.value, at, seqs);
    recordToolRun(store, store.toolState, report, resultSeqs(admitted.value.messages, seqs), () => true, runId, at);
    for (const r of report.ran) {
      store.events.add(runId, "tool.call.ran", r.toolCallId, { tool: r.tool, servedBy: r.servedBy, outcome: r.outcome, ms: r.ms }, at);
      if (r.outcome === "denied") store.events.add(runId, "tool.call.denied", r.toolCallId, { tool: r.tool, servedBy: r.servedBy, by: r.deniedBy ?? "guard", reason: r.reason }, at);
    }
    for (const s of report.searched) addSearchedEvent(store, runId, s, at);
    return last;
  });
  return ok({
    ran: report.ran,
    toolResults: admitted.value.reports,
    appended: admitted.value.messages.length,
    lastSeq,
    ...(report.searched.length ? { searched: report.searched } : {}),
    ...(hooks.log.length ? { hooks: hooks.log } : {}),
  });
}
