import { ok, type Result } from "../../core/problem";
import { auditRecords, type AuditRecord, admitText } from "../../protect";
import type { AppendableMessage } from "../../protocol/messages";
import { APPROVAL_EXPIRED_RESULT } from "../approvals";
import { admitMessages, type AdmittedMessages } from "../tool-results";
import { policiesByModelName } from "../tool-runs";
import type { Loaded } from "./load";
import type { Pulled } from "./pull";
import type { Ran } from "./run-tools";
import type { Staged } from "./stage";

/** What stands in for a result that never came, so the model never reads a call without an answer. */
export const UNANSWERED_RESULT = "[no result: this tool call was not answered before the conversation moved on]";

export interface Admitted {
  /** This turn's messages past the envelope (routed, redacted, trimmed): the model's reply, results, denials and stand-ins, in call order. */
  admitted: AdmittedMessages;
  /** Calls closed without a result. */
  unanswered: { id: string; name: string; awaitingApproval?: true }[];
  /** The user's words past the trust boundary; null on a continuation. */
  typed: { text: string; redactions: AuditRecord[] } | null;
}

/**
 * Everything the turn brings in, in the order the model reads it: the results of the stored open calls (the
 * frontend's, the runtime's, and the user's denials, which answer their calls), then the model's reply and its calls'
 * results. A call nobody answered is closed with a stand-in. All of it passes the trust boundary before it is
 * rendered or stored; the runtime's own notes (denials, error notes, stand-ins) are only redacted and trimmed.
 */
export async function admit(d: Loaded & Pulled & Ran): Promise<Result<Staged<Admitted>>> {
  const { body, decisions, awaitingApproval, nonce, toolRun } = d;
  const results = new Map<string, AppendableMessage>();
  const runtimeWritten = new Set<string>();
  for (const m of decisions.denials) if (m.role === "tool") (results.set(m.tool_call_id, m), runtimeWritten.add(m.tool_call_id));
  for (const r of body.toolResults ?? []) if (!results.has(r.tool_call_id)) results.set(r.tool_call_id, { role: "tool", ...r });
  for (const r of toolRun.results) {
    results.set(r.toolCallId, { role: "tool", tool_call_id: r.toolCallId, content: r.content });
    if (r.runtimeWritten) runtimeWritten.add(r.toolCallId);
  }
  const stored = [...d.openCalls.calls];
  const replied = (body.reply?.tool_calls ?? []).map((c) => [c.id, c.function.name] as const);
  const unanswered: Admitted["unanswered"] = [];
  const answer = ([id, name]: readonly [string, string]): AppendableMessage => {
    const result = results.get(id);
    results.delete(id);
    if (result) return result;
    const waiting = awaitingApproval.has(id);
    unanswered.push(waiting ? { id, name, awaitingApproval: true } : { id, name });
    runtimeWritten.add(id);
    return { role: "tool", tool_call_id: id, content: waiting ? APPROVAL_EXPIRED_RESULT : UNANSWERED_RESULT };
  };
  // Results naming no open call stay in the batch: the envelope refuses them by name.
  // A `delegate` call that started its subagent stays open: the child's final answer is its result.
  const delegated = new Set(d.delegated.map((c) => c.toolCallId));
  const incoming = [...stored.map(answer), ...(body.reply ? [body.reply, ...replied.filter(([id]) => !delegated.has(id)).map(answer)] : []), ...results.values()];
  const closed = new Set(unanswered.map((c) => c.id));
  const admitted = await admitMessages(d.openCalls.calls, incoming, {
    policies: policiesByModelName(d.agent.resultPolicies, d.agent.app, d.toolbox),
    auditKey: d.auditKey,
    nonce,
    awaitingApproval: new Set([...awaitingApproval].filter((id) => !closed.has(id))),
    runtimeWritten,
  });
  if (!admitted.ok) return admitted;
  // Stand-ins are the runtime's, not results: the evidence lists them as unanswered calls instead.
  const reports = admitted.value.reports.filter((r) => !closed.has(r.toolCallId));
  // The user's words pass the boundary like any other channel: stored history, summaries and evidence never hold a secret.
  const passed = body.message === undefined ? null : admitText(body.message, { nonce });
  const typed = passed && { text: passed.text, redactions: await auditRecords(passed.hits, d.auditKey) };
  return ok({
    out: { admitted: { ...admitted.value, reports }, unanswered, typed },
    decided: {
      reply: body.reply !== undefined,
      results: body.toolResults?.length ?? 0,
      ran: toolRun.results.length,
      denials: decisions.denials.length,
      unanswered: unanswered.length,
      redactions: reports.reduce((n, r) => n + r.redactions.length, 0) + admitted.value.assistantRedactions.length + (typed?.redactions.length ?? 0),
    },
  });
}
