import * as z from "zod";
import { DelegationInfo } from "../protocol/delegation";
import type { Database } from "../storage/database";
import { decodeRow, jsonText } from "../storage/decode";
import { ChildTurnIds } from "./columns";

/** A `delegations` row (0014). */
const DelegationRow = z
  .object({
    child_conversation_id: z.string(),
    tool_call_id: z.string(),
    call_seq: z.number(),
    agent: z.string(),
    depth: z.number(),
    turn_id: z.string(),
    status: DelegationInfo.shape.status,
    child_turn_ids: jsonText(ChildTurnIds),
    created_at: z.string(),
    completed_at: z.string().nullable(),
  })
  .transform((r) => ({
    callSeq: r.call_seq,
    info: {
      toolCallId: r.tool_call_id,
      childConversationId: r.child_conversation_id,
      agent: r.agent,
      depth: r.depth,
      turnId: r.turn_id,
      status: r.status,
      childTurnIds: r.child_turn_ids,
      createdAt: r.created_at,
      completedAt: r.completed_at,
    } satisfies DelegationInfo,
  }));

/** A parent conversation's `delegate` calls and the children they started (migration 0014). */
export class DelegationStore {
  constructor(private readonly sql: Database) {}

  /** A call started a child: it stays open until the child's final answer closes it. Inside the turn's transaction. */
  started(d: { toolCallId: string; callSeq: number; childConversationId: string; agent: string; depth: number; turnId: string; childTurnId: string }, at: string): void {
    this.sql.exec(
      "INSERT INTO delegations (child_conversation_id, tool_call_id, call_seq, agent, depth, turn_id, status, child_turn_ids, created_at) VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?)",
      d.childConversationId,
      d.toolCallId,
      d.callSeq,
      d.agent,
      d.depth,
      d.turnId,
      JSON.stringify([d.childTurnId]),
      at,
    );
  }

  /** The running delegation of an open call (made by the message at `callSeq`), if any. */
  runningFor(toolCallId: string, callSeq: number): DelegationInfo | null {
    const row = this.sql.exec("SELECT * FROM delegations WHERE tool_call_id = ? AND call_seq = ? AND status = 'running'", toolCallId, callSeq).toArray()[0];
    return row ? decodeRow(DelegationRow, row, "delegations").info : null;
  }

  byChild(childConversationId: string): (DelegationInfo & { callSeq: number }) | null {
    const row = this.sql.exec("SELECT * FROM delegations WHERE child_conversation_id = ?", childConversationId).toArray()[0];
    if (!row) return null;
    const { info, callSeq } = decodeRow(DelegationRow, row, "delegations");
    return { ...info, callSeq };
  }

  completed(childConversationId: string, childTurnIds: readonly string[], at: string): void {
    this.sql.exec(
      "UPDATE delegations SET status = 'completed', child_turn_ids = ?, completed_at = ? WHERE child_conversation_id = ?",
      JSON.stringify(childTurnIds),
      at,
      childConversationId,
    );
  }

  /** The calls a new message closed before their children answered. */
  abandoned(toolCallIds: readonly string[], callSeq: number, at: string): string[] {
    const children: string[] = [];
    for (const id of toolCallIds) {
      const running = this.runningFor(id, callSeq);
      if (!running) continue;
      this.sql.exec("UPDATE delegations SET status = 'abandoned', completed_at = ? WHERE child_conversation_id = ?", at, running.childConversationId);
      children.push(running.childConversationId);
    }
    return children;
  }

  list(): DelegationInfo[] {
    return this.sql
      .exec("SELECT * FROM delegations ORDER BY created_at, call_seq")
      .toArray()
      .map((r) => decodeRow(DelegationRow, r, "delegations").info);
  }
}
