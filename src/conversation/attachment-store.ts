import * as z from "zod";
import type { AttachmentInfo } from "../protocol/frontend";
import type { Database } from "../storage/database";
import { decodeRow } from "../storage/decode";

const AttachmentRow = z
  .object({ key: z.string(), ref: z.string(), item_id: z.string().nullable(), created_at: z.string() })
  .transform((r): AttachmentInfo => ({ key: r.key, context: r.ref, ...(r.item_id === null ? {} : { itemId: r.item_id }), createdAt: r.created_at }));

/** Contexts the user attached to the conversation at runtime. */
export class AttachmentStore {
  constructor(private readonly sql: Database) {}

  list(): AttachmentInfo[] {
    return this.sql
      .exec("SELECT * FROM attachments ORDER BY created_at, key")
      .toArray()
      .map((r) => decodeRow(AttachmentRow, r, "attachments"));
  }

  /** False when `key` was attached already. */
  attach(key: string, ref: string, itemId: string | undefined, at: string): boolean {
    return this.sql.exec("INSERT OR IGNORE INTO attachments (key, ref, item_id, created_at) VALUES (?, ?, ?, ?) RETURNING key", key, ref, itemId ?? null, at).toArray().length > 0;
  }

  detach(key: string): boolean {
    return this.sql.exec("DELETE FROM attachments WHERE key = ? RETURNING key", key).toArray().length > 0;
  }
}
