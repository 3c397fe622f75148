/**
 * The user's approval of tool calls (docs/history.md, "Approvals"). A call
 * waiting for approval takes no result until the user decides; a denial
 * answers the call with a result the runtime writes; a call still waiting
 * when a new message comes is closed saying it was never run.
 */
import type { ApprovalDecision, ApprovalDecisionBody, TurnBody } from "../protocol/http";
import type { AppendableMessage } from "../protocol/messages";
import { neutralize } from "../core/neutralize";
import { fail, ok, type Result } from "../core/problem";
import type { ApprovalInfo } from "../protocol/frontend";
import type { ApprovalStore } from "./approval-store";
import type { OpenCalls } from "./message-store";
import type { ConversationDb } from "./store";
import type { ConversationScope } from "./scope";
import { admitMessages, storeAdmitted } from "./tool-results";

/** What the model reads for a call the user refused; their reason follows when they gave one. */
export const DENIED_RESULT = "[not run: the user denied this tool call]";
const REASON_LEAD = " Their reason: ";
/** What the model reads for a call still waiting for approval when a new message moved the conversation on. */
export const APPROVAL_EXPIRED_RESULT = "[not run: this tool call was still waiting for the user's approval when the conversation moved on]";

/** The reason in a denial this module wrote, or null when the user gave none. */
export function denialReason(content: string): string | null {
  return content.startsWith(DENIED_RESULT + REASON_LEAD) ? content.slice(DENIED_RESULT.length + REASON_LEAD.length) : null;
}

/** What deciding approvals reaches: the conversation's database and row, the clock and the audit key. */
export type ApprovalScope = Pick<ConversationScope, "db" | "meta" | "auditKey" | "now">;

/** Marks an open call as waiting for the user's approval; asking again while it waits changes nothing. */
export function requestApproval(scope: ApprovalScope, toolCallId: string): Result<{ approval: ApprovalInfo; created: boolean }> {
  const { db: store } = scope;
  const { approvals } = store;
  const open = store.messages.openCalls();
  const tool = open.calls.get(toolCallId);
  if (tool === undefined) return fail("conflict", `no open tool call '${toolCallId}': only a call still waiting for its result can wait for approval`);
  const existing = approvals.get(open.seq, toolCallId);
  if (existing?.state === "requested") return ok({ approval: existing, created: false });
  if (existing) return fail("conflict", `tool call '${toolCallId}' was already ${existing.state}`);
  const at = scope.now().toISOString();
  store.transaction(() => {
    approvals.record(open.seq, toolCallId, tool, "requested", at);
    store.events.add(null, "tool.approval.requested", toolCallId, { tool }, at);
  });
  return ok({ approval: approvals.get(open.seq, toolCallId)!, created: true });
}

/** Decisions checked against the open calls: the states to record, and the denials as results the model reads. */
export interface CheckedDecisions {
  decided: { toolCallId: string; tool: string; approved: boolean }[];
  denials: AppendableMessage[];
}

/** Each decision must name an open call that is not decided yet; asked for or not, the user may decide it. */
function checkDecisions(open: OpenCalls, approvals: ApprovalStore, decisions: readonly ApprovalDecision[], nonce: string | null, pathOf = (i: number) => `approvals.${i}.toolCallId`): Result<CheckedDecisions> {
  const checked: CheckedDecisions = { decided: [], denials: [] };
  for (const [i, d] of decisions.entries()) {
    const tool = open.calls.get(d.toolCallId);
    const at = [{ path: pathOf(i), message: "not an undecided open call" }];
    if (tool === undefined) return fail("conflict", `no open tool call '${d.toolCallId}': its result came, or a new message closed it`, at);
    const state = approvals.get(open.seq, d.toolCallId)?.state;
    if (state !== undefined && state !== "requested") return fail("conflict", `tool call '${d.toolCallId}' was already ${state}`, at);
    checked.decided.push({ toolCallId: d.toolCallId, tool, approved: d.approved });
    if (!d.approved) checked.denials.push({ role: "tool", tool_call_id: d.toolCallId, content: d.reason ? `${DENIED_RESULT}${REASON_LEAD}${neutralize(d.reason, nonce)}` : DENIED_RESULT });
  }
  return ok(checked);
}

/**
 * What a turn does with approvals: its decisions checked against the open
 * calls (the body's schema already paired them with the results), and the
 * calls left waiting. A turn without a new message cannot go on while one
 * waits: the model would read a call without its answer. A new message closes
 * it instead.
 */
export function turnApprovals(
  open: OpenCalls,
  approvals: ApprovalStore,
  body: Pick<TurnBody, "approvals" | "message">,
  nonce: string | null,
): Result<{ checked: CheckedDecisions; awaiting: Set<string> }> {
  const checked = checkDecisions(open, approvals, body.approvals ?? [], nonce);
  if (!checked.ok) return checked;
  const decided = new Set(checked.value.decided.map((d) => d.toolCallId));
  const awaiting = new Set([...approvals.awaiting(open)].filter((id) => !decided.has(id)));
  if (body.message === undefined && awaiting.size > 0) {
    return fail("conflict", `tool call '${[...awaiting][0]}' is waiting for the user's approval: send their decision in approvals, or a new message`);
  }
  return ok({ checked: checked.value, awaiting });
}

/** Records checked decisions on the open calls, inside the caller's transaction. */
export function recordDecisions(store: ConversationDb, approvals: ApprovalStore, open: OpenCalls, decided: CheckedDecisions["decided"], turnId: string | null, at: string): void {
  for (const d of decided) {
    approvals.record(open.seq, d.toolCallId, d.tool, d.approved ? "approved" : "denied", at);
    store.events.add(turnId, "tool.approval.decided", d.toolCallId, { tool: d.tool, approved: d.approved }, at);
  }
}

/**
 * Records the user's decision on an open call. Approved: the call waits for
 * its result as before. Denied: the call is answered with a result saying so
 * (and the user's reason), through the same envelope as any result: redacted,
 * trimmed, audited. The same decision sent again (a retry) answers with the
 * record, and `seq` null.
 */
export async function decideApproval(scope: ApprovalScope, toolCallId: string, decision: ApprovalDecisionBody): Promise<Result<{ approval: ApprovalInfo; seq: number | null }>> {
  const { db: store, meta } = scope;
  const { approvals } = store;
  const open = store.messages.openCalls();
  const state = decision.approved ? "approved" : "denied";
  // A retry is about the newest call with this id; an older call's record says nothing of a newer one.
  const callSeq = open.calls.has(toolCallId) ? open.seq : store.messages.lastCallSeq(toolCallId);
  const recorded = callSeq === null ? null : approvals.get(callSeq, toolCallId);
  if (recorded?.state === state) return ok({ approval: recorded, seq: null });
  // The call is named in the route's path, not in a body's list.
  const checked = checkDecisions(open, approvals, [{ toolCallId, ...decision }], meta.nonce, () => "toolCallId");
  if (!checked.ok) return checked;
  const denial = await admitMessages(open.calls, checked.value.denials, {
    policies: meta.resultPolicies,
    auditKey: await scope.auditKey(),
    nonce: meta.nonce,
    runtimeWritten: new Set([toolCallId]),
  });
  if (!denial.ok) return denial;
  const at = scope.now().toISOString();
  const seq = store.transaction(() => {
    recordDecisions(store, approvals, open, checked.value.decided, null, at);
    return denial.value.messages.length ? storeAdmitted(store, null, denial.value, at) : null;
  });
  return ok({ approval: approvals.get(open.seq, toolCallId)!, seq });
}
