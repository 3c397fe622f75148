import * as z from "zod";
import { ApprovalInfo } from "../protocol/frontend";
import type { Database } from "../storage/database";
import { decodeRow, numeric, text } from "../storage/decode";
import type { OpenCalls } from "./message-store";

/** How a denial is known among stored messages: the message that made the call, and the call's id. */
export function callKey(callSeq: number, toolCallId: string): string {
  return `${callSeq}:${toolCallId}`;
}

/** Approvals in the Conversation's SQLite, one row per tool call that asked for one or was decided. */
export class ApprovalStore {
  constructor(private readonly sql: Database) {}

  get(callSeq: number, toolCallId: string): ApprovalInfo | null {
    const row = this.sql.exec("SELECT * FROM tool_approvals WHERE call_seq = ? AND tool_call_id = ?", callSeq, toolCallId).toArray()[0];
    return row ? decodeRow(ApprovalRow, row, "tool_approvals") : null;
  }

  /** The approvals of the calls still open, in the calls' order. */
  ofOpenCalls(open: OpenCalls): ApprovalInfo[] {
    return [...open.calls.keys()].flatMap((id) => this.get(open.seq, id) ?? []);
  }

  /** The open calls whose approval was asked for and not yet given: their results are refused. */
  awaiting(open: OpenCalls): Set<string> {
    return new Set(this.ofOpenCalls(open).filter((a) => a.state === "requested").map((a) => a.toolCallId));
  }

  /** Every call the user denied, by `callKey`: their results are the runtime's denials, not tool output. */
  denied(): Set<string> {
    return new Set(
      this.sql
        .exec("SELECT call_seq, tool_call_id FROM tool_approvals WHERE state = 'denied'")
        .toArray()
        .map((r) => callKey(numeric(r, "call_seq"), text(r, "tool_call_id"))),
    );
  }

  record(callSeq: number, toolCallId: string, tool: string, state: ApprovalInfo["state"], at: string): void {
    this.sql.exec(
      `INSERT INTO tool_approvals (call_seq, tool_call_id, tool, state, requested_at, decided_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (call_seq, tool_call_id) DO UPDATE SET state = excluded.state, decided_at = excluded.decided_at`,
      callSeq,
      toolCallId,
      tool,
      state,
      at,
      state === "requested" ? null : at,
    );
  }

  /** Approvals still waiting on the open calls become expired: no decision can come any more. */
  expireAwaiting(open: OpenCalls, at: string): void {
    for (const id of this.awaiting(open)) this.record(open.seq, id, open.calls.get(id)!, "expired", at);
  }
}

/** A `tool_approvals` row (0007): its state is one the table's CHECK allows. */
const ApprovalRow = z
  .object({
    tool_call_id: z.string(),
    call_seq: z.number(),
    tool: z.string(),
    state: ApprovalInfo.shape.state,
    requested_at: z.string(),
    decided_at: z.string().nullable(),
  })
  .transform(
    (r): ApprovalInfo => ({ toolCallId: r.tool_call_id, callSeq: r.call_seq, tool: r.tool, state: r.state, requestedAt: r.requested_at, decidedAt: r.decided_at }),
  );
