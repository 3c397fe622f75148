import { fail, ok, type Result } from "../../core/problem";
import { neutralize } from "../../core/neutralize";
import { runCalls, servedCalls, type ToolRunReport } from "../../tools/run";
import { storedCalls } from "../tool-runs";
import type { Loaded } from "./load";
import type { Pulled } from "./pull";
import type { Staged } from "./stage";

export interface Ran {
  /** The calls the runtime ran this turn and what they returned; their results are admitted with the frontend's. */
  toolRun: ToolRunReport;
}

const NOTHING: ToolRunReport = { results: [], ran: [], loaded: [], linked: [], contextsRead: [] };

/**
 * Runs the calls the runtime serves, so one request carries a whole tool round: the model's reply (stored first) and
 * the open calls of the stored history, to the agent's tools and the runtime's own. Calls the frontend answered or the
 * user denied are not run; when a new message closes the calls instead, only those the user approved with it run.
 */
export async function runTools(d: Loaded & Pulled): Promise<Result<Staged<Ran>>> {
  const { body, deps, toolbox } = d;
  const answered = new Set([...(body.toolResults ?? []).map((r) => r.tool_call_id), ...d.decisions.denials.flatMap((m) => (m.role === "tool" ? [m.tool_call_id] : []))]);
  const pending = [...storedCalls(deps.store, d.openCalls), ...(body.reply?.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }))].filter((c) => !answered.has(c.id));
  const serveable = servedCalls(pending, toolbox);
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
  if (served.length === 0) return ok({ out: { toolRun: NOTHING }, decided: { served: 0 } });
  const toolRun = await runCalls(served, { toolbox, loaded: deps.toolState.loaded(), host: deps.tools, conversationId: deps.meta.conversationId, neutralize: (text) => neutralize(text, d.nonce) });
  const failed = toolRun.ran.filter((r) => r.outcome !== "ok").length;
  return ok({ out: { toolRun }, decided: { served: served.length, failed, loaded: toolRun.loaded.map((l) => l.name), linked: toolRun.linked.map((l) => l.name) } });
}
