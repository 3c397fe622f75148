import * as z from "zod";
import type { ResourceInfo } from "../protocol/frontend";
import type { Database } from "../storage/database";
import { decodeRow } from "../storage/decode";

export interface ResourceRecord extends ResourceInfo {
  content: string;
}

const ResourceRow = z
  .object({
    full_id: z.string(),
    app: z.string(),
    title: z.string(),
    content: z.string(),
    summary: z.string().nullable(),
    type: z.string().nullable(),
    version: z.string(),
    updated_at: z.string(),
  })
  .transform(
    (r): ResourceRecord => ({
      fullId: r.full_id,
      app: r.app,
      title: r.title,
      content: r.content,
      ...(r.summary === null ? {} : { summary: r.summary }),
      ...(r.type === null ? {} : { type: r.type }),
      version: r.version,
      sizeChars: r.content.length,
      updatedAt: r.updated_at,
    }),
  );

/** Session resources apps pushed into the conversation. */
export class ResourceStore {
  constructor(private readonly sql: Database) {}

  list(): ResourceRecord[] {
    return this.sql
      .exec("SELECT * FROM resources ORDER BY updated_at, full_id")
      .toArray()
      .map((r) => decodeRow(ResourceRow, r, "resources"));
  }

  get(fullId: string): ResourceRecord | null {
    const row = this.sql.exec("SELECT * FROM resources WHERE full_id = ?", fullId).toArray()[0];
    return row ? decodeRow(ResourceRow, row, "resources") : null;
  }

  put(r: Omit<ResourceRecord, "sizeChars">): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO resources (full_id, app, title, content, summary, type, version, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      r.fullId,
      r.app,
      r.title,
      r.content,
      r.summary ?? null,
      r.type ?? null,
      r.version,
      r.updatedAt,
    );
  }

  delete(fullId: string): boolean {
    return this.sql.exec("DELETE FROM resources WHERE full_id = ? RETURNING full_id", fullId).toArray().length > 0;
  }
}
