import type { Database } from "./database";
import { numeric } from "./decode";

/**
 * Applies a Durable Object's SQL migrations once each, in order, every change of
 * a migration and its bookkeeping row in one transaction: a migration is either
 * wholly applied or not at all.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** A step SQL cannot express (filling a new column from existing rows), run in the same transaction. */
  then?: (db: Database) => void;
}

export function migrate(db: Database, migrations: readonly Migration[]): number {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)");
  const applied = new Set(db.exec("SELECT version FROM schema_migrations").toArray().map((r) => numeric(r, "version")));
  let count = 0;
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (applied.has(m.version)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      m.then?.(db);
      db.exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", m.version, m.name, new Date().toISOString());
    });
    count++;
  }
  return count;
}
