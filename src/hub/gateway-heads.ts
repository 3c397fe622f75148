/**
 * The model gateway's heads, in the user's hub (migration 0015; docs/gateway.md, "Without X-Conversation-Id"): for each
 * conversation the gateway speaks in, the hash chain of the client messages it has consumed. A client that can set only
 * a base URL and a key resends its whole history; the conversation whose head is a chain of that history is the one it
 * continues. The hub is the user's (one per tenant and user), so a lookup never sees another user's conversations.
 */

/** Where a conversation's consumed history ends, as its cursor last moved. */
export interface GatewayHead {
  conversationId: string;
  agent: string;
  chain: string;
  consumed: number;
  at: string;
}

/** How many matching conversations a lookup names: the one continued and a few others, for the response's header. */
const MATCHES = 10;

export class GatewayHeads {
  constructor(private readonly sql: SqlStorage) {}

  moved(head: GatewayHead): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO gateway_heads (conversation_id, agent, chain, consumed, moved_at) VALUES (?, ?, ?, ?, ?)",
      head.conversationId,
      head.agent,
      head.chain,
      head.consumed,
      head.at,
    );
  }

  /**
   * The agent's live conversations whose head is one of `chains`, best first: the one that consumed the most of the
   * history (a shorter one would take the rest, answers included, as new), then the one that moved last.
   */
  matching(agent: string, chains: readonly string[]): string[] {
    if (chains.length === 0) return [];
    // One bound JSON array rather than a parameter per chain: a history may be longer than SQLite's bound-parameter limit.
    return this.sql
      .exec<{ conversation_id: string }>(
        `SELECT h.conversation_id FROM gateway_heads h JOIN conversations c ON c.conversation_id = h.conversation_id
         WHERE h.chain IN (SELECT value FROM json_each(?)) AND h.agent = ? AND c.ended_at IS NULL
         ORDER BY h.consumed DESC, h.moved_at DESC LIMIT ?`,
        JSON.stringify(chains),
        agent,
        MATCHES,
      )
      .toArray()
      .map((r) => r.conversation_id);
  }
}
