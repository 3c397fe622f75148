import { admitText } from "../protect/boundary";

/**
 * Session resources pushed before the trust boundary existed were stored as the app sent them; they pass it once,
 * when the conversation migrates, as every resource now does when it is pushed (rendering does not neutralise
 * again, so a redaction marker stays `[REDACTED:rule]`).
 */
export function admitStoredResources(storage: DurableObjectStorage): void {
  const rows = storage.sql.exec<{ full_id: string; title: string; content: string; summary: string | null }>("SELECT full_id, title, content, summary FROM resources").toArray();
  for (const row of rows) {
    const admit = (text: string) => admitText(text).text;
    storage.sql.exec("UPDATE resources SET title = ?, content = ?, summary = ? WHERE full_id = ?", admit(row.title), admit(row.content), row.summary === null ? null : admit(row.summary), row.full_id);
  }
}
