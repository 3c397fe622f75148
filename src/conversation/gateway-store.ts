type Row = Record<string, SqlStorageValue>;

/**
 * Where the model gateway is in the client's copy of the conversation (migration 0013): `consumed` client messages
 * (system messages aside, the gateway's own answers counted) and the hash of the last one; `awaiting` while the model
 * still owes an answer to what was consumed (an upstream failure, a broken stream).
 */
export interface GatewayCursor {
  consumed: number;
  lastHash: string;
  awaiting: boolean;
}

/** The model's real usage for one upstream call, recorded on the turn whose input it read. */
export interface ModelUsage {
  turnId: string;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number | null;
  /** Prompt tokens written to the upstream's cache (an Anthropic upstream reports them); absent otherwise. */
  cacheWriteTokens?: number | null;
  model: string | null;
  /** Which upstream call of the gateway request this was (1-based). */
  step: number;
}

export class GatewayStore {
  constructor(private readonly storage: DurableObjectStorage) {}

  cursor(): GatewayCursor | null {
    const row = this.storage.sql.exec<Row>("SELECT consumed, last_hash, awaiting FROM gateway_cursor WHERE id = 1").toArray()[0];
    return row ? { consumed: row.consumed as number, lastHash: row.last_hash as string, awaiting: row.awaiting === 1 } : null;
  }

  setCursor(cursor: GatewayCursor, at: string): void {
    this.storage.sql.exec(
      "INSERT OR REPLACE INTO gateway_cursor (id, consumed, last_hash, awaiting, updated_at) VALUES (1, ?, ?, ?, ?)",
      cursor.consumed,
      cursor.lastHash,
      cursor.awaiting ? 1 : 0,
      at,
    );
  }
}
