import { fail, ok, type Result } from "../../core/problem";
import { sha256Hex } from "../../core/version";
import { compactionLimits, withModelWindow } from "../../history/policy";
import type { CompactionPolicy } from "../../protocol/policies";
import type { TurnResult } from "../../protocol/frontend";
import type { TurnBody } from "../../protocol/http";
import type { ConversationScope } from "../scope";
import { replay } from "./replay";
import { History } from "../history";
import { toolHost } from "../scope";
import type { ToolHost } from "../../tools/calls";
import type { TurnOptions } from "./options";
import type { Staged } from "./stage";
import type { OpenCalls } from "../message-store";
import { turnApprovals, type CheckedDecisions } from "../approvals";

export interface Loaded {
  scope: ConversationScope;
  options: TurnOptions;
  /** The conversation's history beyond what is stored: views, summaries, compaction. */
  history: History;
  /** Where the tools the runtime serves run (the apps), and the guard's and ranking's models. */
  tools: ToolHost;
  /** The tenant's audit key: every redaction this turn records is hashed with it. */
  auditKey: CryptoKey;
  body: TurnBody;
  turnId: string;
  requestDigest: string;
  /** The turn carries no message: the model goes on answering the last one, after tool results or decisions. */
  continuation: boolean;
  policy: CompactionPolicy;
  nonce: string | null;
  /** The model input's bound in tokens: the window bounds every turn, and a budget may be tighter, never larger. */
  maxTokens: number | undefined;
  /** The turn's one clock reading: identity, evidence and stored rows all carry it. */
  now: Date;
  /** The stored answer of this turnId, when the same request was answered before: the turn ends here with it. */
  replayed: TurnResult | null;
  /** The calls still waiting for a result, the user's decisions on them (checked), and those still awaiting one. */
  openCalls: OpenCalls;
  decisions: CheckedDecisions;
  awaitingApproval: Set<string>;
}

/**
 * The turn's identity and rules: a turnId already answered is replayed (the same request) or refused (another one);
 * an ended conversation takes no turn; the compaction policy gets the window this turn's model has; the approvals it
 * carries must decide open calls. All of it is checked before any app is asked anything.
 */
export async function load(scope: ConversationScope, body: TurnBody, options: TurnOptions): Promise<Result<Staged<Loaded>>> {
  const { turnId: givenId, ...request } = body;
  const history = new History(scope);
  const frame = { scope, options, history, tools: toolHost(scope), auditKey: await scope.auditKey() };
  const turnId = givenId ?? crypto.randomUUID();
  const requestDigest = await sha256Hex(JSON.stringify(request));
  const prior = scope.db.turns.get(turnId);
  const continuation = body.message === undefined;
  const nonce = scope.meta.nonce;
  if (prior) {
    if (prior.requestDigest !== requestDigest) return fail("conflict", `turnId '${turnId}' was already used for a different request`);
    const replayed = replay(scope, history, prior);
    const none = { openCalls: { seq: 0, calls: new Map() }, decisions: { decided: [], denials: [] }, awaitingApproval: new Set<string>() };
    return ok({ out: { ...frame, body, turnId, requestDigest, continuation, policy: scope.meta.compactionPolicy, maxTokens: undefined, nonce, now: scope.now(), replayed, ...none }, decided: { replayed: true } });
  }
  if (scope.meta.endedAt) return fail("conflict", "this conversation has ended");
  const policy = turnPolicy(scope.meta.compactionPolicy, body.budget);
  if (!policy.ok) return policy;
  // A reply sent again (a retry without a turnId) would run its calls twice: its calls, ids and arguments alike, are
  // the newest stored. (Ids alone may repeat: some models number every reply's calls from call_0.) A request with a
  // turnId of its own is trusted: a retry of it replays, and a model polling with the same call is let through.
  const calls = (list: readonly { id: string; function: { name: string; arguments: string } }[]) => JSON.stringify(list.map((c) => [c.id, c.function.name, c.function.arguments]));
  const replied = body.reply?.tool_calls ?? [];
  if (givenId === undefined && replied.length && calls(replied) === calls(scope.db.messages.lastCalls())) {
    return fail("conflict", `this reply is stored already (its calls ${replied.map((c) => `'${c.id}'`).join(", ")} came in an earlier request): to retry a turn safely, send it again with the same turnId`);
  }
  const usable = compactionLimits(policy.value)?.usable;
  const maxTokens = usable === undefined ? body.budget?.maxTokens : Math.min(body.budget?.maxTokens ?? usable, usable);
  const openCalls = scope.db.messages.openCalls();
  // A `delegate` call whose subagent is still at work has no result to read yet: only the child's answer (or a new
  // message, which closes the call) moves the conversation on.
  if (continuation) {
    for (const id of openCalls.calls.keys()) {
      const running = scope.db.delegations.runningFor(id, openCalls.seq);
      if (running) {
        return fail(
          "conflict",
          `tool call '${id}' (delegate to ${running.agent}) is waiting for its subagent: run conversation '${running.childConversationId}' to its final answer (POST /v1/conversations/${running.childConversationId}/delegation/complete), then continue; or send the user's next message, which closes the call`,
        );
      }
    }
  }
  const approvals = turnApprovals(openCalls, scope.db.approvals, body, nonce);
  if (!approvals.ok) return approvals;
  const { checked: decisions, awaiting: awaitingApproval } = approvals.value;
  return ok({
    out: { ...frame, body, turnId, requestDigest, continuation, policy: policy.value, maxTokens, nonce, now: scope.now(), replayed: null, openCalls, decisions, awaitingApproval },
    decided: { continuation, maxTokens: maxTokens ?? 0, openCalls: openCalls.calls.size, decisions: decisions.decided.length },
  });
}

/** The conversation's compaction policy, with the window this turn's model has when the turn names one; checked as a whole again. */
function turnPolicy(policy: CompactionPolicy, budget: TurnBody["budget"]): Result<CompactionPolicy> {
  const parsed = withModelWindow(policy, budget ?? {});
  return parsed.success ? ok(parsed.data) : fail("invalid-request", `budget: ${parsed.error.issues[0]!.message}`, parsed.error.issues.map((i) => ({ path: `budget.${i.path.join(".")}`, message: i.message })));
}
