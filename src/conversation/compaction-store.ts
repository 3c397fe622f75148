import * as z from "zod";
import type { SummaryOverlay } from "../history/view";
import { SummaryTrust } from "../protocol/evidence";
import type { Database } from "../storage/database";
import { decodeRow, jsonText, numeric, numericOrNull, text } from "../storage/decode";
import { SummaryLoss, SummaryState } from "./columns";

export interface CompactionRecord {
  id: number;
  reason: CompactionReason;
  /** The summary this compaction wrote, or null when it only cleared tool results. */
  summary: (SummaryOverlay & { state: unknown }) | null;
  tokensBefore: number;
  tokensAfter: number;
  /** The image boundary once it ran: images of messages at or before this seq are placeholders (0: none). */
  imagesHiddenThrough: number;
  createdAt: string;
}

export const CompactionReason = z.enum(["auto", "manual", "clear"]);
export type CompactionReason = z.infer<typeof CompactionReason>;

/** Compaction overlays in the Conversation's SQLite: summaries and cleared tool results. Stored messages are not touched. */
export class CompactionStore {
  constructor(private readonly sql: Database) {}

  latestId(): number {
    return numericOrNull(this.sql.exec("SELECT MAX(id) AS id FROM compactions").one(), "id") ?? 0;
  }

  /** The summary in effect as of compaction `asOf` (the latest by default). */
  summary(asOf = Number.MAX_SAFE_INTEGER): CompactionRecord["summary"] {
    return this.inEffect(asOf)?.summary ?? null;
  }

  /** The compaction whose summary (or clear) is in effect as of compaction `asOf`, with that summary. */
  inEffect(asOf = Number.MAX_SAFE_INTEGER): { id: number; summary: NonNullable<CompactionRecord["summary"]> } | null {
    const row = this.sql.exec("SELECT * FROM compactions WHERE id <= ? AND through_seq IS NOT NULL ORDER BY id DESC LIMIT 1", asOf).toArray()[0];
    const record = row ? decodeRow(CompactionRow, row, "compactions") : null;
    return record?.summary ? { id: record.id, summary: record.summary } : null;
  }

  /**
   * The image boundary in effect as of compaction `asOf` (the latest by default): the images of messages at or before
   * it are placeholders. Only a compaction moves it, and only forward.
   */
  imagesHiddenThrough(asOf = Number.MAX_SAFE_INTEGER): number {
    return numericOrNull(this.sql.exec("SELECT MAX(images_hidden_through) AS seq FROM compactions WHERE id <= ?", asOf).one(), "seq") ?? 0;
  }

  /** Whether any summary or clear was ever recorded: from then on, search_history is offered. */
  everCovered(): boolean {
    return this.sql.exec("SELECT 1 FROM compactions WHERE through_seq IS NOT NULL LIMIT 1").toArray().length > 0;
  }

  list(): CompactionRecord[] {
    return this.sql
      .exec("SELECT * FROM compactions ORDER BY id")
      .toArray()
      .map((r) => decodeRow(CompactionRow, r, "compactions"));
  }

  /** Records a compaction; its image boundary is `imagesHiddenThrough`, or the one in effect when it hides no image (a boundary never moves back). */
  add(reason: CompactionReason, summary: CompactionRecord["summary"], tokens: { before: number; after: number }, at: string, imagesHiddenThrough = 0): number {
    const boundary = Math.max(imagesHiddenThrough, this.imagesHiddenThrough());
    const row = this.sql
      .exec(
        "INSERT INTO compactions (reason, from_seq, through_seq, summary, summary_state, summariser, trust, loss, tokens_before, tokens_after, created_at, images_hidden_through) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        reason,
        summary?.fromSeq ?? 1,
        summary?.throughSeq ?? null,
        summary?.text ?? null,
        summary ? JSON.stringify(summary.state ?? null) : null,
        summary?.summariser ?? null,
        summary?.trust ?? null,
        JSON.stringify(summary?.loss ?? []),
        tokens.before,
        tokens.after,
        at,
        boundary,
      )
      .one();
    return numeric(row, "id");
  }

  /** Stubs in place of tool results after `afterSeq`, as of compaction `asOf`: seq → stub. */
  stubs(afterSeq: number, asOf = Number.MAX_SAFE_INTEGER): Map<number, string> {
    const rows = this.sql.exec("SELECT seq, stub FROM cleared_results WHERE seq > ? AND compaction_id <= ?", afterSeq, asOf);
    return new Map([...rows].map((r) => [numeric(r, "seq"), text(r, "stub")]));
  }

  /** Tokens the stubs after `afterSeq` save against the stored results. */
  savedAfter(afterSeq: number): number {
    return numericOrNull(this.sql.exec("SELECT SUM(saved_tokens) AS n FROM cleared_results WHERE seq > ?", afterSeq).one(), "n") ?? 0;
  }

  clearResult(seq: number, compactionId: number, stub: string, savedTokens: number): void {
    this.sql.exec("INSERT OR IGNORE INTO cleared_results (seq, compaction_id, stub, saved_tokens) VALUES (?, ?, ?, ?)", seq, compactionId, stub, savedTokens);
  }
}

/**
 * A `compactions` row (0004; from_seq since 0006, 1 before; images_hidden_through since 0011, 0 before). A row with a
 * `through_seq` holds a summary, written whole; summary_state NULL reads as null.
 */
const CompactionRow = z
  .object({
    id: z.number(),
    reason: CompactionReason,
    from_seq: z.number(),
    through_seq: z.number().nullable(),
    summary: z.string().nullable(),
    summariser: z.string().nullable(),
    trust: SummaryTrust.nullable(),
    loss: jsonText(SummaryLoss),
    summary_state: jsonText(SummaryState).nullable(),
    tokens_before: z.number(),
    tokens_after: z.number(),
    images_hidden_through: z.number(),
    created_at: z.string(),
  })
  .transform((r, ctx): CompactionRecord => {
    let summary: CompactionRecord["summary"] = null;
    if (r.through_seq !== null) {
      if (r.summary === null || r.summariser === null || r.trust === null) {
        ctx.addIssue({ code: "custom", message: "a summary's text, summariser and trust are all stored with it" });
        return z.NEVER;
      }
      summary = { fromSeq: r.from_seq, throughSeq: r.through_seq, text: r.summary, summariser: r.summariser, trust: r.trust, loss: r.loss, state: r.summary_state };
    }
    return {
      id: r.id,
      reason: r.reason,
      summary,
      tokensBefore: r.tokens_before,
      tokensAfter: r.tokens_after,
      imagesHiddenThrough: r.images_hidden_through,
      createdAt: r.created_at,
    };
  });
