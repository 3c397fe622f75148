import type { Database } from "../storage/database";
import { admitStoredResources } from "./admit-stored";
import { HistorySearchStore } from "./history-search-store";
import { MessageStore } from "./message-store";
import { ResourceStore } from "./resource-store";

/**
 * The steps SQL cannot express, by the version of the migration they complete (src/conversation/migrations.ts):
 * apart from the SQL files, so the migrations also run where those are read from disk (test/unit/support/node-sql.ts).
 */
export const MIGRATION_STEPS = {
  /** Token counts and running totals for the messages stored before rows carried them. */
  4: (db) => new MessageStore(db, new HistorySearchStore(db)).backfillTokens(),
  /** Resources stored before the trust boundary pass it. */
  9: (db) => admitStoredResources(new ResourceStore(db)),
  /** search_history's index over the messages stored before it. */
  17: (db) => new HistorySearchStore(db).backfill(),
} satisfies Record<number, (db: Database) => void>;
