/**
 * A subagent's two sides (docs/tools.md, "Subagents"). The child's: created for the `delegate` call, it takes its first
 * turn at once with its parent's hints, and its final answer goes back to the parent. The parent's: that answer closes
 * the `delegate` call through the tool-result envelope. Each side runs in its own Conversation object, over its scope.
 */
import type { AppendixSection } from "../core/assemble";
import { newNonce } from "../core/runtime-tag";
import { fail, ok, type Result } from "../core/problem";
import type { Owner } from "../protocol/owner";
import { DEFAULT_COMPACTION_POLICY } from "../history/policy";
import { fenceText, recallForTurn } from "../memory";
import { auditRecords, admitText, type SecretHit } from "../protect";
import type { DelegationCompleted, DelegationStart } from "../protocol/delegation";
import type { ToolResultEvidence } from "../protocol/evidence";
import { textOf, type ChatMessage } from "../protocol/messages";
import { checkRoom } from "./capacity";
import { wrapDelegationFence } from "./delegation";
import { endConversation } from "./lifecycle";
import type { ChildAnswer, ConversationScope } from "./scope";
import { admitMessages, storeAdmitted } from "./tool-results";
import { takeTurn } from "./turn/index";
import type { TurnSections } from "./turn-sections";

/** Tokens the parent's memory slice may take in the child's first message. */
const SLICE_MEMORY_TOKENS = 600;

/**
 * The child's side: the hints its parent hands it, as one fenced appendix section of its first message. The `context`
 * the delegating model wrote passes the child's trust boundary (neutralised with the child's nonce, secrets
 * redacted); the parent's memory is sliced by the task, from the parent's own namespace chain (only when the parent's
 * agent reads memory), each memory rendered as the memory fence renders it. Memories the child's own recall shows
 * are left out here.
 */
async function delegationSection(
  kv: KVNamespace,
  owner: Owner,
  start: DelegationStart,
  nonce: string | null,
  ownMemoryIds: ReadonlySet<string>,
  halfLifeHours: number | undefined,
): Promise<{ section: AppendixSection | null; hits: SecretHit[]; memories: number; memoryError?: string }> {
  const entries: { id: string; text: string }[] = [];
  const hits: SecretHit[] = [];
  if (start.context !== undefined) {
    const admitted = admitText(start.context, { nonce });
    hits.push(...admitted.hits);
    entries.push({ id: "context", text: `- (context the delegating agent passed) ${fenceText(admitted.text, nonce)}` });
  }
  let memories = 0;
  let memoryError: string | undefined;
  if (start.memorySession !== null) {
    const query = start.context === undefined ? start.task : `${start.task}\n${start.context}`;
    const scope = { ...owner, session: start.memorySession };
    const recalled = await recallForTurn(kv, scope, query, { nonce, budgetTokens: SLICE_MEMORY_TOKENS, ...(halfLifeHours === undefined ? {} : { halfLifeHours }) });
    memoryError = recalled.error;
    for (const m of recalled.selected) {
      if (ownMemoryIds.has(m.id)) continue;
      entries.push({ id: `parent:${m.id}`, text: m.entry });
      memories++;
    }
  }
  if (entries.length === 0) return { section: null, hits, memories, ...(memoryError ? { memoryError } : {}) };
  const section: AppendixSection = { kind: "memory", entries, wrap: (texts) => wrapDelegationFence(texts, nonce) };
  return { section, hits, memories, ...(memoryError ? { memoryError } : {}) };
}

/** What the parent reads as the call's result: the child's final answer, or a note when it gave none. */
function answerText(content: string | null, agent: string): string {
  return content && content.trim() ? content : `[the subagent ${agent} finished without an answer]`;
}

/**
 * The child's side of a `delegate` call, inside its queue: this conversation is created for the subagent, with its
 * parent, call and depth in its meta, and takes its first turn at once: the task is its user message, and its
 * parent's hints (the call's `context` and a slice of the parent's memory) are fenced in that message's appendix. It
 * never sees the parent's history.
 */
export async function startChild(scope: Omit<ConversationScope, "meta">, start: DelegationStart): Promise<Result<{ turnId: string }>> {
  const { owner, db } = scope;
  if (db.conversation.get()) return fail("conflict", "conversation already exists");
  const found = await scope.apps.agent(start.agent);
  if (!found) return fail("not-found", `no agent '${start.agent}' is registered`);
  const createdAt = scope.now().toISOString();
  db.conversation.create({
    conversationId: start.childConversationId,
    tenant: owner.tenant,
    user: owner.user,
    agent: start.agent,
    agentContexts: found.attachedContexts,
    resultPolicies: found.resultPolicies,
    compactionPolicy: DEFAULT_COMPACTION_POLICY,
    createdAt,
    nonce: newNonce(),
    parent: { conversationId: start.parent.conversationId, toolCallId: start.parent.toolCallId },
    depth: start.parent.depth,
  });
  await scope.apps.conversationCreated({ id: start.childConversationId, agent: start.agent, createdAt }, false);
  const child: ConversationScope = { ...scope, meta: db.conversation.get()! };
  let received: { memories: number; hits: SecretHit[] } = { memories: 0, hits: [] };
  const hints = async (nonce: string | null, own: TurnSections): Promise<TurnSections> => {
    const ownIds = new Set(own.sections.filter((s) => s.kind === "memory").flatMap((s) => s.entries.map((e) => e.id)));
    const slice = await delegationSection(scope.memory.kv, owner, start, nonce, ownIds, scope.memory.halfLifeHours);
    received = { memories: slice.memories, hits: slice.hits };
    const memoryError = own.memoryError ?? slice.memoryError;
    return { ...own, sections: slice.section ? [slice.section, ...own.sections] : own.sections, ...(memoryError ? { memoryError } : {}) };
  };
  const turn = await takeTurn(child, { agent: start.agent, message: start.task }, { more: hints });
  const redactions = await auditRecords(received.hits, await scope.auditKey());
  const data = { toolCallId: start.parent.toolCallId, depth: start.parent.depth, context: start.context !== undefined, memories: received.memories, ...(redactions.length ? { redactions } : {}) };
  db.events.add(turn.ok ? turn.value.turnId : null, "delegation.received", start.parent.conversationId, data, createdAt);
  if (turn.ok) return ok({ turnId: turn.value.turnId });
  // A child that could not take its first turn never runs: it ends, and the parent's call reads why.
  await endConversation({ ...child, meta: db.conversation.get()! });
  return turn;
}

/**
 * The child's final answer: stored in the child past the trust boundary, then handed to the parent, whose `delegate`
 * call it closes as the call's result; the child then ends. Nothing is stored when the parent refuses it (its call was
 * closed already).
 */
export async function completeChild(scope: ConversationScope, reply: ChatMessage): Promise<Result<DelegationCompleted>> {
  const { db: store, meta } = scope;
  if (!meta.parent) return fail("conflict", "this conversation is not a subagent's: no delegate call waits for its answer");
  if (reply.role !== "assistant" || reply.tool_calls?.length) return fail("invalid-request", "the final answer is an assistant message without tool calls");
  const open = store.messages.openCalls();
  if (open.calls.size) {
    return fail("conflict", `tool calls ${[...open.calls.keys()].map((id) => `'${id}'`).join(", ")} are still open: send the reply that made them as the child's next turn before its final answer`);
  }
  const auditKey = await scope.auditKey();
  const admitted = await admitMessages(open.calls, [reply], { policies: meta.resultPolicies, auditKey, nonce: meta.nonce });
  if (!admitted.ok) return admitted;
  const room = checkRoom(store.messages, admitted.value.messages);
  if (!room.ok) return room;
  const answer = textOf(admitted.value.messages[0]!);
  const childTurnIds = store.turns.ids();
  const closed = await scope.conversations.closeInParent(meta.parent.conversationId, { childConversationId: meta.conversationId, toolCallId: meta.parent.toolCallId, answer: answer.trim() ? answer : null, childTurnIds });
  if (!closed.ok) return closed;
  const at = scope.now().toISOString();
  store.transaction(() => {
    storeAdmitted(store, null, admitted.value, at);
    store.events.add(null, "delegation.completed", meta.parent!.conversationId, { toolCallId: meta.parent!.toolCallId, childTurnIds }, at);
  });
  const ended = await endConversation({ ...scope, meta: store.conversation.get()! });
  return ok({ parentConversationId: meta.parent.conversationId, toolCallId: meta.parent.toolCallId, toolResult: closed.value.toolResult, childTurnIds, endedAt: ended.endedAt ?? at });
}

/**
 * The parent's side: a child's final answer closes its `delegate` call, through the tool-result envelope (routed to
 * the call, neutralised, redacted, trimmed by the agent's policy for `delegate`). Refused when the call is no longer
 * open (a new message closed it first, or a result came from elsewhere).
 */
export async function closeDelegateCall(scope: Pick<ConversationScope, "db" | "meta" | "auditKey" | "now">, done: ChildAnswer): Promise<Result<{ toolResult: ToolResultEvidence }>> {
  const { db: store, meta } = scope;
  const { delegations } = store;
  const delegation = delegations.byChild(done.childConversationId);
  if (!delegation || delegation.toolCallId !== done.toolCallId) return fail("not-found", `no delegate call started conversation '${done.childConversationId}' here`);
  const open = store.messages.openCalls();
  if (delegation.status !== "running" || open.seq !== delegation.callSeq || !open.calls.has(done.toolCallId)) {
    return fail("conflict", `the delegate call '${done.toolCallId}' was closed before its subagent answered (the conversation moved on): the answer can no longer reach it`);
  }
  const content = answerText(done.answer, delegation.agent);
  const admitted = await admitMessages(open.calls, [{ role: "tool", tool_call_id: done.toolCallId, content }], {
    policies: meta.resultPolicies,
    auditKey: await scope.auditKey(),
    nonce: meta.nonce,
    awaitingApproval: store.approvals.awaiting(open),
    runtimeWritten: new Set(done.answer === null ? [done.toolCallId] : []),
  });
  if (!admitted.ok) return admitted;
  const room = checkRoom(store.messages, admitted.value.messages);
  if (!room.ok) return room;
  const at = scope.now().toISOString();
  store.transaction(() => {
    storeAdmitted(store, `delegation:${done.childConversationId}`, admitted.value, at);
    delegations.completed(done.childConversationId, done.childTurnIds, at);
    store.events.add(delegation.turnId, "delegation.completed", done.childConversationId, { toolCallId: done.toolCallId, agent: delegation.agent, childTurnIds: done.childTurnIds }, at);
  });
  return ok({ toolResult: admitted.value.reports[0]! });
}
