import type { ApprovalInfo } from "../protocol/frontend";
import type { OpenCalls } from "./message-store";

type Row = Record<string, SqlStorageValue>;

/** How a denial is known among stored messages: the message that made the call, and the call's id. */
export function callKey(callSeq: number, toolCallId: string): string {
  return `${callSeq}:${toolCallId}`;
}

/** Approvals in the Conversation's SQLite, one row per tool call that asked for one or was decided. */
export class ApprovalStore {
  constructor(private readonly storage: DurableObjectStorage) {}

  private get sql() {
    return this.storage.sql;
  }

  get(callSeq: number, toolCallId: string): ApprovalInfo | null {
    const row = this.sql.exec<Row>("SELECT * FROM tool_approvals WHERE call_seq = ? AND tool_call_id = ?", callSeq, toolCallId).toArray()[0];
    return row ? approvalInfo(row) : null;
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
        .exec<Row>("SELECT call_seq, tool_call_id FROM tool_approvals WHERE state = 'denied'")
        .toArray()
        .map((r) => callKey(r.call_seq as number, r.tool_call_id as string)),
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

function approvalInfo(row: Row): ApprovalInfo {
  return {
    toolCallId: row.tool_call_id as string,
    callSeq: row.call_seq as number,
    tool: row.tool as string,
    state: row.state as ApprovalInfo["state"],
    requestedAt: row.requested_at as string,
    decidedAt: row.decided_at as string | null,
  };
}
