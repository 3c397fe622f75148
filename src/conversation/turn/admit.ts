import { ok, type Result } from "../../core/problem";
import { auditRecords, type AuditRecord } from "../../protect/audit";
import { admitText } from "../../protect/boundary";
import type { AppendableMessage } from "../../protocol/messages";
import { APPROVAL_EXPIRED_RESULT } from "../approvals";
import { admitMessages, inCallOrder, type AdmittedMessages } from "../tool-results";
import type { Loaded } from "./load";
import type { Pulled } from "./pull";
import type { Staged } from "./stage";

/** What stands in for a result that never came, so the model never reads a call without an answer. */
export const UNANSWERED_RESULT = "[no result: this tool call was not answered before the conversation moved on]";

export interface Admitted {
  /** This turn's tool results past the envelope (routed, redacted, trimmed), denials and stand-ins, in call order. */
  admitted: AdmittedMessages;
  fresh: AppendableMessage[];
  /** Calls a new message closed without a result. */
  unanswered: { id: string; name: string; awaitingApproval?: true }[];
  /** The user's words past the trust boundary; null on a continuation. */
  typed: { text: string; redactions: AuditRecord[] } | null;
}

/**
 * Everything the turn brings in: the user's message, the results of open calls and the user's denials (a denial
 * answers its call: the model reads that it was not run, and why). A new message closes the calls still open, with
 * a stand-in each. All of it passes the trust boundary before it is rendered or stored.
 */
export async function admit(d: Loaded & Pulled): Promise<Result<Staged<Admitted>>> {
  const { deps, body, decisions, awaitingApproval, nonce } = d;
  const open = new Map(d.openCalls.calls);
  const callOrder = new Map([...open.keys()].map((id, i) => [id, i]));
  const results: AppendableMessage[] = [...decisions.denials, ...(body.toolResults ?? []).map((r): AppendableMessage => ({ role: "tool", ...r }))];
  const admitted = await admitMessages(open, results, {
    policies: d.agent.resultPolicies,
    auditKey: deps.auditKey,
    nonce,
    awaitingApproval,
    runtimeWritten: new Set(decisions.denials.flatMap((m) => (m.role === "tool" ? [m.tool_call_id] : []))),
  });
  if (!admitted.ok) return admitted;
  for (const m of admitted.value.messages) if (m.role === "tool") open.delete(m.tool_call_id);
  const unanswered = [...open].map(([id, name]) => (awaitingApproval.has(id) ? { id, name, awaitingApproval: true as const } : { id, name }));
  const closing: AppendableMessage[] = unanswered.map((c) => ({ role: "tool", tool_call_id: c.id, content: "awaitingApproval" in c ? APPROVAL_EXPIRED_RESULT : UNANSWERED_RESULT }));
  // Stand-ins take their calls' places among the results, so every call is followed by its answers in order.
  const fresh = inCallOrder([...admitted.value.messages, ...closing], callOrder);
  // The user's words pass the boundary like any other channel: stored history, summaries and evidence never hold a secret.
  const passed = body.message === undefined ? null : admitText(body.message, { nonce });
  const typed = passed && { text: passed.text, redactions: await auditRecords(passed.hits, deps.auditKey) };
  return ok({
    out: { admitted: admitted.value, fresh, unanswered, typed },
    decided: {
      results: body.toolResults?.length ?? 0,
      denials: decisions.denials.length,
      unanswered: unanswered.length,
      redactions: admitted.value.reports.reduce((n, r) => n + r.redactions.length, 0) + (typed?.redactions.length ?? 0),
    },
  });
}
