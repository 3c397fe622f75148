import type { ApprovalDecision, ApprovalDecisionBody } from "../api/schemas";
import type { AppendableMessage } from "../core/messages";
import { fail, ok, type Result } from "../core/problem";
import type { ApprovalInfo } from "../protocol/frontend";
import type { ConversationMeta, ConversationStore } from "./store";
import { admitMessages, storeAdmitted } from "./tool-results";

type Row = Record<string, SqlStorageValue>;

/** What the model reads for a call the user refused; their reason follows when they gave one. */
export const DENIED_RESULT = "[not run: the user denied this tool call]";
const REASON_LEAD = " Their reason: ";
/** What the model reads for a call still waiting for approval when a new message moved the conversation on. */
export const APPROVAL_EXPIRED_RESULT = "[not run: this tool call was still waiting for the user's approval when the conversation moved on]";

/** The reason in a denial this module wrote, or null when the user gave none. */
export function denialReason(content: string): string | null {
  return content.startsWith(DENIED_RESULT + REASON_LEAD) ? content.slice(DENIED_RESULT.length + REASON_LEAD.length) : null;
}

/** Approvals in the Conversation's SQLite, one row per tool call that asked for one. */
export class ApprovalStore {
  constructor(private readonly storage: DurableObjectStorage) {}

  private get sql() {
    return this.storage.sql;
  }

  get(toolCallId: string): ApprovalInfo | null {
    const row = this.sql.exec<Row>("SELECT * FROM tool_approvals WHERE tool_call_id = ?", toolCallId).toArray()[0];
    return row ? approvalInfo(row) : null;
  }

  /** The approvals of the calls still open, in the calls' order. */
  ofOpenCalls(open: ReadonlyMap<string, string>): ApprovalInfo[] {
    return [...open.keys()].flatMap((id) => this.get(id) ?? []);
  }

  /** The open calls whose approval was asked for and not yet given: their results are refused. */
  awaiting(open: ReadonlyMap<string, string>): Set<string> {
    return new Set(this.ofOpenCalls(open).filter((a) => a.state === "requested").map((a) => a.toolCallId));
  }

  /** Every call the user denied: their results are the runtime's denials, not tool output. */
  denied(): Set<string> {
    return new Set(this.sql.exec<Row>("SELECT tool_call_id FROM tool_approvals WHERE state = 'denied'").toArray().map((r) => r.tool_call_id as string));
  }

  record(toolCallId: string, tool: string, state: ApprovalInfo["state"], at: string): void {
    this.sql.exec(
      `INSERT INTO tool_approvals (tool_call_id, tool, state, requested_at, decided_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (tool_call_id) DO UPDATE SET state = excluded.state, decided_at = excluded.decided_at`,
      toolCallId,
      tool,
      state,
      at,
      state === "requested" ? null : at,
    );
  }
}

function approvalInfo(row: Row): ApprovalInfo {
  return {
    toolCallId: row.tool_call_id as string,
    tool: row.tool as string,
    state: row.state as ApprovalInfo["state"],
    requestedAt: row.requested_at as string,
    decidedAt: row.decided_at as string | null,
  };
}

export interface ApprovalDeps {
  store: ConversationStore;
  approvals: ApprovalStore;
  meta: ConversationMeta;
  auditKey: () => Promise<CryptoKey>;
  now: () => Date;
}

/** Marks an open call as waiting for the user's approval; asking again while it waits changes nothing. */
export function requestApproval(deps: ApprovalDeps, toolCallId: string): Result<{ approval: ApprovalInfo; created: boolean }> {
  const { store, approvals } = deps;
  const tool = store.openToolCalls().get(toolCallId);
  if (tool === undefined) return fail("conflict", `no open tool call '${toolCallId}': only a call still waiting for its result can wait for approval`);
  const existing = approvals.get(toolCallId);
  if (existing?.state === "requested") return ok({ approval: existing, created: false });
  if (existing) return fail("conflict", `tool call '${toolCallId}' was already ${existing.state}`);
  const at = deps.now().toISOString();
  store.transaction(() => {
    approvals.record(toolCallId, tool, "requested", at);
    store.addEvent(null, "tool.approval.requested", toolCallId, { tool }, at);
  });
  return ok({ approval: approvals.get(toolCallId)!, created: true });
}

/** Decisions checked against the open calls: the states to record, and the denials as results the model reads. */
export interface CheckedDecisions {
  decided: { toolCallId: string; tool: string; approved: boolean }[];
  denials: AppendableMessage[];
}

/** Each decision must name an open call that is not decided yet; asked for or not, the user may decide it. */
export function checkDecisions(open: ReadonlyMap<string, string>, approvals: ApprovalStore, decisions: readonly ApprovalDecision[]): Result<CheckedDecisions> {
  const checked: CheckedDecisions = { decided: [], denials: [] };
  for (const [i, d] of decisions.entries()) {
    const tool = open.get(d.toolCallId);
    const at = [{ path: `approvals.${i}.toolCallId`, message: "not an undecided open call" }];
    if (tool === undefined) return fail("conflict", `no open tool call '${d.toolCallId}': its result came, or a new message closed it`, at);
    const state = checked.decided.some((c) => c.toolCallId === d.toolCallId) ? "decided in this request" : approvals.get(d.toolCallId)?.state;
    if (state !== undefined && state !== "requested") return fail("conflict", `tool call '${d.toolCallId}' was already ${state}`, at);
    checked.decided.push({ toolCallId: d.toolCallId, tool, approved: d.approved });
    if (!d.approved) checked.denials.push({ role: "tool", tool_call_id: d.toolCallId, content: d.reason ? `${DENIED_RESULT}${REASON_LEAD}${d.reason}` : DENIED_RESULT });
  }
  return ok(checked);
}

/** Records checked decisions, inside the caller's transaction. */
export function recordDecisions(store: ConversationStore, approvals: ApprovalStore, decided: CheckedDecisions["decided"], turnId: string | null, at: string): void {
  for (const d of decided) {
    approvals.record(d.toolCallId, d.tool, d.approved ? "approved" : "denied", at);
    store.addEvent(turnId, "tool.approval.decided", d.toolCallId, { tool: d.tool, approved: d.approved }, at);
  }
}

/**
 * Records the user's decision on an open call. Approved: the call waits for
 * its result as before. Denied: the call is answered with a result saying so
 * (and the user's reason), through the same envelope as any result: redacted,
 * trimmed, audited.
 */
export async function decideApproval(deps: ApprovalDeps, toolCallId: string, decision: ApprovalDecisionBody): Promise<Result<{ approval: ApprovalInfo; seq: number | null }>> {
  const { store, approvals, meta } = deps;
  const open = store.openToolCalls();
  const checked = checkDecisions(open, approvals, [{ toolCallId, ...decision }]);
  if (!checked.ok) return checked;
  const denial = await admitMessages(open, checked.value.denials, { policies: meta.resultPolicies, auditKey: await deps.auditKey() });
  if (!denial.ok) return denial;
  const at = deps.now().toISOString();
  const seq = store.transaction(() => {
    recordDecisions(store, approvals, checked.value.decided, null, at);
    return denial.value.messages.length ? storeAdmitted(store, null, denial.value, at) : null;
  });
  return ok({ approval: approvals.get(toolCallId)!, seq });
}
