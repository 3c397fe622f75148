import type { SummaryOverlay } from "../history/view";
import type { SummaryTrust } from "../protocol/evidence";

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

export type CompactionReason = "auto" | "manual" | "clear";

type Row = Record<string, SqlStorageValue>;

/** Compaction overlays in the Conversation's SQLite: summaries and cleared tool results. Stored messages are not touched. */
export class CompactionStore {
  constructor(private readonly storage: DurableObjectStorage) {}

  private get sql() {
    return this.storage.sql;
  }

  latestId(): number {
    return this.sql.exec<{ id: number | null }>("SELECT MAX(id) AS id FROM compactions").one().id ?? 0;
  }

  /** The summary in effect as of compaction `asOf` (the latest by default). */
  summary(asOf = Number.MAX_SAFE_INTEGER): CompactionRecord["summary"] {
    return this.inEffect(asOf)?.summary ?? null;
  }

  /** The compaction whose summary (or clear) is in effect as of compaction `asOf`, with that summary. */
  inEffect(asOf = Number.MAX_SAFE_INTEGER): { id: number; summary: NonNullable<CompactionRecord["summary"]> } | null {
    const row = this.sql.exec<Row>("SELECT * FROM compactions WHERE id <= ? AND through_seq IS NOT NULL ORDER BY id DESC LIMIT 1", asOf).toArray()[0];
    const record = row ? compactionRecord(row) : null;
    return record?.summary ? { id: record.id, summary: record.summary } : null;
  }

  /**
   * The image boundary in effect as of compaction `asOf` (the latest by default): the images of messages at or before
   * it are placeholders. Only a compaction moves it, and only forward.
   */
  imagesHiddenThrough(asOf = Number.MAX_SAFE_INTEGER): number {
    return this.sql.exec<{ seq: number | null }>("SELECT MAX(images_hidden_through) AS seq FROM compactions WHERE id <= ?", asOf).one().seq ?? 0;
  }

  /** Whether any summary or clear was ever recorded: from then on, search_history is offered. */
  everCovered(): boolean {
    return this.sql.exec("SELECT 1 FROM compactions WHERE through_seq IS NOT NULL LIMIT 1").toArray().length > 0;
  }

  list(): CompactionRecord[] {
    return this.sql.exec<Row>("SELECT * FROM compactions ORDER BY id").toArray().map(compactionRecord);
  }

  /** Records a compaction; its image boundary is `imagesHiddenThrough`, or the one in effect when it hides no image (a boundary never moves back). */
  add(reason: CompactionReason, summary: CompactionRecord["summary"], tokens: { before: number; after: number }, at: string, imagesHiddenThrough = 0): number {
    const boundary = Math.max(imagesHiddenThrough, this.imagesHiddenThrough());
    return this.sql
      .exec<{ id: number }>(
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
      .one().id;
  }

  /** Stubs in place of tool results after `afterSeq`, as of compaction `asOf`: seq → stub. */
  stubs(afterSeq: number, asOf = Number.MAX_SAFE_INTEGER): Map<number, string> {
    const rows = this.sql.exec<Row>("SELECT seq, stub FROM cleared_results WHERE seq > ? AND compaction_id <= ?", afterSeq, asOf);
    return new Map([...rows].map((r) => [r.seq as number, r.stub as string]));
  }

  /** Tokens the stubs after `afterSeq` save against the stored results. */
  savedAfter(afterSeq: number): number {
    return this.sql.exec<{ n: number | null }>("SELECT SUM(saved_tokens) AS n FROM cleared_results WHERE seq > ?", afterSeq).one().n ?? 0;
  }

  clearResult(seq: number, compactionId: number, stub: string, savedTokens: number): void {
    this.sql.exec("INSERT OR IGNORE INTO cleared_results (seq, compaction_id, stub, saved_tokens) VALUES (?, ?, ?, ?)", seq, compactionId, stub, savedTokens);
  }
}

function compactionRecord(row: Row): CompactionRecord {
  const summary =
    row.through_seq === null
      ? null
      : {
          fromSeq: row.from_seq as number,
          throughSeq: row.through_seq as number,
          text: row.summary as string,
          summariser: row.summariser as string,
          trust: row.trust as SummaryTrust,
          loss: JSON.parse(row.loss as string) as string[],
          state: JSON.parse(row.summary_state as string) as unknown,
        };
  return {
    id: row.id as number,
    reason: row.reason as CompactionReason,
    summary,
    tokensBefore: row.tokens_before as number,
    tokensAfter: row.tokens_after as number,
    imagesHiddenThrough: (row.images_hidden_through as number | undefined) ?? 0,
    createdAt: row.created_at as string,
  };
}
