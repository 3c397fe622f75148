/**
 * The SQL a store needs and no more. A Durable Object's `ctx.storage` fills it through `durableDatabase`; a thin
 * adapter over node:sqlite fills it in tests and benchmarks (test/unit/support/node-sql.ts), so every store, and the
 * migrations, run the same SQL in plain Node.
 */

/** What a statement binds: the stores write text, numbers and NULLs only. */
export type SqlValue = string | number | null;

/** One row as SQLite returns it: its columns are read through the decoders (src/storage/decode.ts), never cast. */
export type Row = Readonly<Record<string, unknown>>;

export interface Rows extends Iterable<Row> {
  toArray(): Row[];
  /** The one row; throws when there is none or more than one. */
  one(): Row;
  /** Each row as an array of its values, in the query's column order: no object per row, for reads of thousands. */
  raw(): Iterable<readonly unknown[]>;
}

export interface Database {
  exec(query: string, ...bindings: SqlValue[]): Rows;
  /** Runs `run` in one transaction: all of its writes, or none when it throws. */
  transaction<T>(run: () => T): T;
}

export function durableDatabase(storage: DurableObjectStorage): Database {
  return {
    exec: (query, ...bindings) => storage.sql.exec(query, ...bindings),
    transaction: (run) => storage.transactionSync(run),
  };
}
