import type { DelegationInfo } from "../protocol/delegation";

interface DelegationRow extends Record<string, SqlStorageValue> {
  child_conversation_id: string;
  tool_call_id: string;
  call_seq: number;
  agent: string;
  depth: number;
  turn_id: string;
  status: string;
  child_turn_ids: string;
  created_at: string;
  completed_at: string | null;
}

/** A parent conversation's `delegate` calls and the children they started (migration 0014). */
export class DelegationStore {
  constructor(private readonly storage: DurableObjectStorage) {}

  private get sql() {
    return this.storage.sql;
  }

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
    const row = this.sql
      .exec<DelegationRow>("SELECT * FROM delegations WHERE tool_call_id = ? AND call_seq = ? AND status = 'running'", toolCallId, callSeq)
      .toArray()[0];
    return row ? info(row) : null;
  }

  byChild(childConversationId: string): (DelegationInfo & { callSeq: number }) | null {
    const row = this.sql.exec<DelegationRow>("SELECT * FROM delegations WHERE child_conversation_id = ?", childConversationId).toArray()[0];
    return row ? { ...info(row), callSeq: row.call_seq } : null;
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
    return this.sql.exec<DelegationRow>("SELECT * FROM delegations ORDER BY created_at, call_seq").toArray().map(info);
  }
}

function info(row: DelegationRow): DelegationInfo {
  return {
    toolCallId: row.tool_call_id,
    childConversationId: row.child_conversation_id,
    agent: row.agent,
    depth: row.depth,
    turnId: row.turn_id,
    status: row.status as DelegationInfo["status"],
    childTurnIds: JSON.parse(row.child_turn_ids) as string[],
    createdAt: row.created_at,
    completedAt: row.completed_at,
  };
}
