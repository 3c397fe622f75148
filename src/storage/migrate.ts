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
  then?: (storage: DurableObjectStorage) => void;
}

export function migrate(storage: DurableObjectStorage, migrations: readonly Migration[]): number {
  const { sql } = storage;
  sql.exec(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
  );
  const applied = new Set(sql.exec<{ version: number }>("SELECT version FROM schema_migrations").toArray().map((r) => r.version));
  let count = 0;
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (applied.has(m.version)) continue;
    storage.transactionSync(() => {
      sql.exec(m.sql);
      m.then?.(storage);
      sql.exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", m.version, m.name, new Date().toISOString());
    });
    count++;
  }
  return count;
}
