/**
 * The part of Node 22's `node:sqlite` the tests and benchmarks use (the project's @types/node is 20's, which has no
 * such module). `npm test` and `npx` run Node 22 from the `node` dev dependency.
 */
declare module "node:sqlite" {
  type SqlValue = string | number | bigint | null | Uint8Array;
  export class StatementSync {
    all(...bindings: SqlValue[]): Record<string, unknown>[];
    run(...bindings: SqlValue[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  }
  export class DatabaseSync {
    constructor(location: string);
    exec(sql: string): void;
    prepare(sql: string): StatementSync;
    close(): void;
  }
}
