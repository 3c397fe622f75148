/**
 * The `output` hooks on answers that do not come in a turn (docs/hooks.md): the gateway's answers, checked step by step
 * (it asks the model again on a rejection), and answers a frontend appends (`POST …/messages`), refused on a rejection.
 * Their calls land as `hook.called` / `hook.failed` events on the turn whose input the model read.
 */
import { fail, ok, type Result } from "../core/problem";
import { hooksAt, type HookScope } from "../hooks/chain";
import { admitText } from "../protect";
import { rejectionNote, reviewOutput, type ModelAnswer, type OutputReview } from "../hooks/output";
import type { AppendableMessage } from "../protocol/messages";
import type { Toolbox } from "../protocol/tools";
import type { ConversationScope } from "./scope";
import type { ConversationDb } from "./store";

/** What checking an answer reaches: the agent's hooks (its toolbox, from the apps) and where they run. */
export type ReviewScope = Pick<ConversationScope, "db" | "meta" | "apps">;

/**
 * The gateway's check of one model answer (docs/hooks.md, `output`): the agent's output hooks read it with the
 * user's request; their calls land as `hook.called` events on the turn whose input the model read. A rejection comes
 * with the note the model reads when it is asked again, in the runtime's tag.
 */
export async function reviewGatewayOutput(
  scope: ReviewScope,
  check: { agent: string; turnId: string; reply: ModelAnswer; attempt: number },
): Promise<Result<OutputReview & { reminder?: string; rejected?: string | null }>> {
  const { db: store, meta } = scope;
  const toolbox = await scope.apps.toolbox(check.agent);
  if (!toolbox) return fail("not-found", `no agent '${check.agent}' is registered`);
  const hooks = hookScope(scope, toolbox, check.agent, check.turnId);
  const review = await reviewOutput(hooks, { request: store.messages.lastUserText(), reply: check.reply, attempt: check.attempt }, meta.nonce);
  recordCalls(store, hooks, check.turnId, check.attempt);
  if (review.verdict === "accept") return ok(review);
  // What the model is shown of its rejected answer passes the trust boundary, as it would have been stored.
  const rejected = typeof check.reply.content === "string" && check.reply.content ? admitText(check.reply.content, { nonce: meta.nonce }).text : null;
  return ok({ ...review, reminder: rejectionNote(review, meta.nonce), rejected });
}

/**
 * The answers in a frontend's append, checked before anything is stored: the conversation's agent's output hooks read
 * each assistant message; the first rejection refuses the append (422, with the hook's note), so the frontend asks its
 * model again. Nothing to check without an agent or output hooks.
 */
export async function reviewAppended(scope: ReviewScope, messages: readonly AppendableMessage[]): Promise<Result<true>> {
  const { db: store, meta } = scope;
  const answers = messages.flatMap((m, i) => (m.role === "assistant" ? [{ m, i }] : []));
  if (answers.length === 0 || meta.agent === null) return ok(true);
  const toolbox = await scope.apps.toolbox(meta.agent);
  if (!toolbox || hooksAt(toolbox.hooks ?? [], "output").length === 0) return ok(true);
  const turnId = store.turns.latestId() ?? `append:${crypto.randomUUID()}`;
  const hooks = hookScope(scope, toolbox, meta.agent, turnId);
  const request = store.messages.lastUserText();
  try {
    for (const { m, i } of answers) {
      const review = await reviewOutput(hooks, { request, reply: m, attempt: 0 }, meta.nonce);
      if (review.verdict === "reject") return fail("not-accepted", `hook '${review.hook}' rejected the model's answer: ${review.note}`, [{ path: `messages.${i}`, message: review.note }]);
    }
    return ok(true);
  } finally {
    recordCalls(store, hooks, turnId, 0);
  }
}

function hookScope(scope: ReviewScope, toolbox: Toolbox, agent: string, turnId: string): HookScope {
  return { host: scope.apps, conversationId: scope.meta.conversationId, turnId, agent, hooks: toolbox.hooks ?? [], log: [] };
}

function recordCalls(store: ConversationDb, hooks: HookScope, turnId: string, attempt: number): void {
  const at = new Date().toISOString();
  store.transaction(() => {
    for (const call of hooks.log) store.events.add(turnId, call.failed ? "hook.failed" : "hook.called", call.hook, { ...call, attempt }, at);
  });
}
