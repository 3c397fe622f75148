import { fail, ok, type Result } from "../../core/problem";
import { neutralize } from "../../core/neutralize";
import { runCalls, servedCalls, type ToolRunReport } from "../../tools/run";
import { gateCalls } from "../../tools/gate";
import { storedCalls } from "../tool-runs";
import { offersHistorySearch } from "../history-search-store";
import { startDelegations, type DelegatedCall } from "../delegation";
import type { Loaded } from "./load";
import type { Pulled } from "./pull";
import type { Staged } from "./stage";

export interface Ran {
  /** The calls the runtime ran this turn and what they returned; their results are admitted with the frontend's. */
  toolRun: ToolRunReport;
  /** `delegate` calls that started a subagent: they stay open (no result, no stand-in) until the child answers. */
  delegated: DelegatedCall[];
}

const NOTHING: ToolRunReport = { results: [], ran: [], loaded: [], linked: [], contextsRead: [], searched: [] };

/**
 * Runs the calls the runtime serves, so one request carries a whole tool round: the model's reply (stored first) and
 * the open calls of the stored history, to the agent's tools and the runtime's own. Calls the frontend answered or the
 * user denied are not run; when a new message closes the calls instead, only those the user approved with it run.
 */
export async function runTools(d: Loaded & Pulled): Promise<Result<Staged<Ran>>> {
  const { body, scope, toolbox } = d;
  const answered = new Set([...(body.toolResults ?? []).map((r) => r.tool_call_id), ...d.decisions.denials.flatMap((m) => (m.role === "tool" ? [m.tool_call_id] : []))]);
  const pending = [...storedCalls(scope.db, d.openCalls), ...(body.reply?.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }))].filter((c) => !answered.has(c.id));
  // search_history reads this conversation's own messages, when it offers the tool.
  const history = offersHistorySearch(toolbox.agent, d.history.everCovered()) ? scope.db.searchIndex : undefined;
  const serveable = servedCalls(pending, toolbox, history);
  // An approved call runs on the runtime only when the runtime serves its tool; the frontend sends its own tools' results.
  const servedIds = new Set(serveable.map((c) => c.id));
  const approved = new Set<string>();
  for (const [i, decision] of (body.approvals ?? []).entries()) {
    if (decision.approved) approved.add(decision.toolCallId);
    if (decision.approved && !answered.has(decision.toolCallId) && !servedIds.has(decision.toolCallId)) {
      return fail("invalid-request", `tool call '${decision.toolCallId}' was approved, but the runtime does not serve its tool: send its result in toolResults`, [
        { path: `approvals.${i}.toolCallId`, message: "an approved call's result comes in toolResults with it" },
      ]);
    }
  }
  // A new message closes the open calls instead, but for those the user approved with it.
  const served = d.continuation ? serveable : serveable.filter((c) => approved.has(c.id));
  if (served.length === 0) return ok({ out: { toolRun: NOTHING, delegated: [] }, decided: { served: 0 } });
  const neutralizeText = (text: string) => neutralize(text, d.nonce);
  // `delegate` starts subagents, each in a child conversation; every other call runs on the apps or the runtime.
  // The guard and the `tool.before` hooks see every call first, once: a denied `delegate` starts no subagent.
  // The request the calls serve: the last stored user message (a new message in this body came after them).
  const request = scope.db.messages.lastUserText();
  const gated = await gateCalls(served, { toolbox, neutralize: neutralizeText, hooks: d.hooks, request, host: d.tools });
  const delegating = gated.allowed.filter((c) => c.name === "delegate");
  const others = served.filter((c) => c.name !== "delegate");
  const othersGated = { allowed: gated.allowed.filter((c) => c.name !== "delegate"), denied: gated.denied.filter((x) => x.ran.tool !== "delegate") };
  const [ran, delegation] = await Promise.all([
    others.length ? runCalls(others, { toolbox, loaded: scope.db.toolState.loaded(), host: d.tools, conversationId: scope.meta.conversationId, neutralize: neutralizeText, hooks: d.hooks, gated: othersGated, history }) : NOTHING,
    startDelegations(delegating, { toolbox, conversationId: scope.meta.conversationId, depth: scope.meta.depth, memory: d.agent.memory, start: (start) => scope.conversations.startDelegation(start), neutralize: neutralizeText }),
  ]);
  const deniedDelegations = gated.denied.filter((x) => x.ran.tool === "delegate");
  const toolRun: ToolRunReport = {
    ...ran,
    results: [...ran.results, ...delegation.results, ...deniedDelegations.map((x) => x.result)],
    ran: [...ran.ran, ...delegation.ran, ...deniedDelegations.map((x) => x.ran)],
  };
  const failed = toolRun.ran.filter((r) => r.outcome !== "ok" && r.outcome !== "delegated").length;
  return ok({
    out: { toolRun, delegated: delegation.delegated },
    decided: { served: served.length, failed, loaded: toolRun.loaded.map((l) => l.name), linked: toolRun.linked.map((l) => l.name), ...(toolRun.searched.length ? { searched: toolRun.searched.length } : {}), ...(delegation.delegated.length ? { delegated: delegation.delegated.map((c) => c.childConversationId) } : {}) },
  });
}
