import * as z from "zod";
import type { Database } from "../storage/database";
import { decodeRow, text } from "../storage/decode";

/**
 * Where the model gateway is in the client's copy of the conversation (migration 0013): `consumed` client messages
 * (system messages aside, the gateway's own answers counted) and the hash of the last one; `awaiting` while the model
 * still owes an answer to what was consumed (an upstream failure, a broken stream); `chain`, the hash chain of all of
 * them (migration 0018; null for a cursor written before, until a resent history gives it one).
 */
export interface GatewayCursor {
  consumed: number;
  lastHash: string;
  awaiting: boolean;
  chain: string | null;
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

/** A gateway request's run in progress (migration 0016): its id, and the turn that took its new part. */
export interface GatewayRun {
  runId: string;
  turnId: string;
}

/** The cursor's row (0013; `chain` since 0018, NULL before). */
const CursorRow = z
  .object({ consumed: z.number(), last_hash: z.string(), awaiting: z.number(), chain: z.string().nullable() })
  .transform((r): GatewayCursor => ({ consumed: r.consumed, lastHash: r.last_hash, awaiting: r.awaiting === 1, chain: r.chain }));

export class GatewayStore {
  constructor(private readonly sql: Database) {}

  cursor(): GatewayCursor | null {
    const row = this.sql.exec("SELECT consumed, last_hash, awaiting, chain FROM gateway_cursor WHERE id = 1").toArray()[0];
    return row ? decodeRow(CursorRow, row, "gateway_cursor") : null;
  }

  /** Moves the cursor; `run` is the run in progress from now on (null: none), left as it is when absent. */
  setCursor(cursor: GatewayCursor, at: string, run?: GatewayRun | null): void {
    const kept = run === undefined ? this.openRun() : run;
    this.sql.exec(
      "INSERT OR REPLACE INTO gateway_cursor (id, consumed, last_hash, awaiting, chain, updated_at, run_id, run_turn) VALUES (1, ?, ?, ?, ?, ?, ?, ?)",
      cursor.consumed,
      cursor.lastHash,
      cursor.awaiting ? 1 : 0,
      cursor.chain,
      at,
      kept?.runId ?? null,
      kept?.turnId ?? null,
    );
  }

  /** The run in progress, if any: a gateway request between its first turn and its end. */
  openRun(): GatewayRun | null {
    const row = this.sql.exec("SELECT run_id, run_turn FROM gateway_cursor WHERE id = 1 AND run_id IS NOT NULL").toArray()[0];
    return row ? { runId: text(row, "run_id"), turnId: text(row, "run_turn") } : null;
  }

  /** The run ended (answered, or failed): none is in progress. */
  endRun(runId: string): void {
    this.sql.exec("UPDATE gateway_cursor SET run_id = NULL, run_turn = NULL WHERE id = 1 AND run_id = ?", runId);
  }
}
