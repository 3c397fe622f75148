import * as z from "zod";
import type { LedgerEntry } from "../core/ledger";
import { LedgerKind } from "../protocol/evidence";
import type { Database } from "../storage/database";
import { decodeRow, text } from "../storage/decode";

export interface InjectedEntry extends LedgerEntry {
  messageSeq: number;
}

const LedgerRow = z
  .object({ kind: LedgerKind, key: z.string(), title: z.string(), version: z.string(), message_seq: z.number() })
  .transform((r): InjectedEntry => ({ kind: r.kind, key: r.key, title: r.title, version: r.version, messageSeq: r.message_seq }));

/** The context ledger (`context_versions`): which version of each context and resource the model was shown, and where. */
export class LedgerStore {
  constructor(private readonly sql: Database) {}

  /** The ledger, each entry with the seq of the message that carried its injection. */
  list(): InjectedEntry[] {
    return this.sql
      .exec("SELECT kind, key, title, version, message_seq FROM context_versions")
      .toArray()
      .map((r) => decodeRow(LedgerRow, r, "context_versions"));
  }

  record(entry: LedgerEntry, turnId: string, messageSeq: number, at: string): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO context_versions (kind, key, title, version, turn_id, message_seq, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      entry.kind,
      entry.key,
      entry.title,
      entry.version,
      turnId,
      messageSeq,
      at,
    );
  }

  forget(kind: LedgerKind, key: string): void {
    this.sql.exec("DELETE FROM context_versions WHERE kind = ? AND key = ?", kind, key);
  }

  /** Forgets the contexts whose injection is in none of `shown`: the model can no longer read it, so it is injected again. */
  forgetOutside(shown: ReadonlySet<number>): void {
    for (const entry of this.list()) {
      if (!shown.has(entry.messageSeq)) this.forget(entry.kind, entry.key);
    }
  }

  /** Forgets the contexts whose injection is in messages 1..`throughSeq`, so their current value is injected again. */
  forgetThrough(throughSeq: number): string[] {
    return this.sql
      .exec("DELETE FROM context_versions WHERE message_seq <= ? RETURNING key", throughSeq)
      .toArray()
      .map((r) => text(r, "key"));
  }
}
