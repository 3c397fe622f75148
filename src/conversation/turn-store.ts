import * as z from "zod";
import type { Database } from "../storage/database";
import { decodeRow, jsonText, text } from "../storage/decode";
import { ContextEnvelope, MissingContext } from "../protocol/evidence";
import type { TurnSummary } from "../protocol/frontend";
import { HistoryView } from "./columns";

export interface TurnRecord {
  turnId: string;
  requestDigest: string;
  systemPrompt: string;
  /** The turn's last stored message. */
  userSeq: number;
  /** The stored messages the model read, as [from, to] seq ranges (seq 0 is the summary); empty when it read all up to `userSeq`. */
  historyView: [number, number][];
  /** The latest compaction when the turn was built: its summary and stubs are what the turn read. */
  compactionId: number;
  result: string;
}

const TurnRow = z
  .object({
    turn_id: z.string(),
    request_digest: z.string(),
    system_prompt: z.string(),
    user_seq: z.number(),
    history_view: jsonText(HistoryView),
    compaction_id: z.number(),
    result: z.string(),
    created_at: z.string(),
  })
  .transform((r) => ({
    turn: {
      turnId: r.turn_id,
      requestDigest: r.request_digest,
      systemPrompt: r.system_prompt,
      userSeq: r.user_seq,
      historyView: r.history_view,
      compactionId: r.compaction_id,
      result: r.result,
    } satisfies TurnRecord,
    createdAt: r.created_at,
  }));

const SummaryRow = z.object({
  turn_id: z.string(),
  created_at: z.string(),
  agent: z.string(),
  tokens: z.number(),
  selection: jsonText(ContextEnvelope.shape.selection),
  missing: jsonText(z.array(MissingContext)),
  tool_calls: z.number(),
  compacted: z.number().nullable(),
});

/** The turns taken (`turns`): each one's request digest and result, so a retried request is answered the same. */
export class TurnStore {
  constructor(private readonly sql: Database) {}

  /** The turn that read the newest user message (the last stored one when several did): the one a model's answer follows. */
  latestId(): string | null {
    const row = this.sql.exec("SELECT turn_id FROM turns ORDER BY user_seq DESC, created_at DESC LIMIT 1").toArray()[0];
    return row ? text(row, "turn_id") : null;
  }

  get(turnId: string): TurnRecord | null {
    return this.withTime(turnId)?.turn ?? null;
  }

  /** The turn and when it was taken. */
  withTime(turnId: string): { turn: TurnRecord; createdAt: string } | null {
    const row = this.sql.exec("SELECT * FROM turns WHERE turn_id = ?", turnId).toArray()[0];
    return row ? decodeRow(TurnRow, row, "turns") : null;
  }

  /**
   * Turns `offset` onwards, oldest first, each as the few fields of its stored result a listing shows: read by SQLite
   * (json_extract), so no turn's whole answer, its model input included, is parsed.
   */
  summaries(offset: number, limit: number): TurnSummary[] {
    return this.sql
      .exec(
        `SELECT turn_id, created_at, json_extract(result, '$.agent.id') AS agent, json_extract(result, '$.usage.total') AS tokens,
                json_extract(result, '$.envelope.selection') AS selection, json_extract(result, '$.envelope.missing') AS missing,
                IFNULL(json_array_length(result, '$.envelope.tools.ran'), 0) AS tool_calls, json_type(result, '$.envelope.compaction') = 'object' AS compacted
         FROM turns ORDER BY created_at, user_seq LIMIT ? OFFSET ?`,
        limit,
        offset,
      )
      .toArray()
      .map((row) => {
        const r = decodeRow(SummaryRow, row, "turns");
        const missing = new Map(r.missing.map((m) => [m.id, { reason: m.reason, detail: m.detail }]));
        const leftOut = r.selection.omitted.map((o) => ({ ...o, ...(o.reason === "missing" && missing.has(o.id) ? { missing: missing.get(o.id)! } : {}) }));
        return { turnId: r.turn_id, createdAt: r.created_at, agent: r.agent, tokens: r.tokens, selected: r.selection.selected.map((s) => s.id), leftOut, toolCalls: r.tool_calls, compacted: r.compacted === 1 };
      });
  }

  /** Every turn's id, oldest first. */
  ids(): string[] {
    return this.sql
      .exec("SELECT turn_id FROM turns ORDER BY created_at, user_seq")
      .toArray()
      .map((r) => text(r, "turn_id"));
  }

  /** The system message the latest turn gave the model, or null before the first turn. */
  latestSystemPrompt(): string | null {
    const row = this.sql.exec("SELECT system_prompt AS p FROM turns ORDER BY user_seq DESC, created_at DESC LIMIT 1").toArray()[0];
    return row ? text(row, "p") : null;
  }

  save(t: TurnRecord, at: string): void {
    this.sql.exec(
      "INSERT INTO turns (turn_id, request_digest, system_prompt, user_seq, history_view, compaction_id, result, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      t.turnId,
      t.requestDigest,
      t.systemPrompt,
      t.userSeq,
      JSON.stringify(t.historyView),
      t.compactionId,
      t.result,
      at,
    );
  }
}
