/**
 * The conversation's SQLite in Node's own (node:sqlite, Node 22), behind the same `Database` a Durable Object's
 * `ctx.storage` fills (src/storage/database.ts): the stores' SQL and the migrations run here unchanged.
 */
import { readdirSync, readFileSync } from "node:fs";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { MIGRATION_STEPS } from "../../../src/conversation/migration-steps";
import { HistorySearchStore } from "../../../src/conversation/history-search-store";
import { ConversationDb } from "../../../src/conversation/store";
import { textOf, type ChatMessage } from "../../../src/protocol/messages";
import type { Database, Row } from "../../../src/storage/database";
import { migrate, type Migration } from "../../../src/storage/migrate";

const MIGRATIONS = new URL("../../../migrations/conversation/", import.meta.url);

/** A Database over a DatabaseSync, each statement prepared once; a transaction is a savepoint, so one may nest in another. */
export function nodeDatabase(db: DatabaseSync): Database {
  const statements = new Map<string, StatementSync>();
  let depth = 0;
  return {
    exec(query, ...bindings) {
      // A migration's file: several statements, nothing bound, nothing returned.
      if (bindings.length === 0 && /;\s*\S/.test(query)) {
        db.exec(query);
        return rows([]);
      }
      let statement = statements.get(query);
      if (!statement) statements.set(query, (statement = db.prepare(query)));
      return rows(statement.all(...bindings));
    },
    transaction(run) {
      const name = `t${depth++}`;
      db.exec(`SAVEPOINT ${name}`);
      try {
        const result = run();
        db.exec(`RELEASE ${name}`);
        return result;
      } catch (error) {
        db.exec(`ROLLBACK TO ${name}`);
        db.exec(`RELEASE ${name}`);
        throw error;
      } finally {
        depth--;
      }
    },
  };
}

function rows(all: Row[]) {
  return {
    [Symbol.iterator]: () => all[Symbol.iterator](),
    toArray: () => all,
    // node:sqlite keeps the query's column order in each row object.
    raw: () => all.map((row) => Object.values(row)),
    one() {
      if (all.length !== 1) throw new Error(`expected one row, got ${all.length}`);
      return all[0]!;
    },
  };
}

/** migrations/conversation/*.sql, in order, each with the step that completes it: what the Conversation object applies. */
export function conversationMigrations(): Migration[] {
  return readdirSync(MIGRATIONS)
    .filter((file) => /^\d{4}_.*\.sql$/.test(file))
    .sort()
    .map((file) => {
      const version = Number(file.slice(0, 4));
      const then = (MIGRATION_STEPS as Record<number, Migration["then"]>)[version];
      return { version, name: file.replace(/\.sql$/, ""), sql: readFileSync(new URL(file, MIGRATIONS), "utf8"), ...(then ? { then } : {}) };
    });
}

/** A conversation's database in memory, with every migration applied, its repositories composed over it. */
export function memoryDatabase(): { sql: DatabaseSync; database: Database; db: ConversationDb } {
  const sql = new DatabaseSync(":memory:");
  const database = nodeDatabase(sql);
  migrate(database, conversationMigrations());
  return { sql, database, db: new ConversationDb(database) };
}

const INDEX = readFileSync(new URL("0017_history_search.sql", MIGRATIONS), "utf8");

/** The columns of `messages` the index reads, as the conversation's migrations leave them. */
const MESSAGES = "CREATE TABLE messages (seq INTEGER PRIMARY KEY, turn_id TEXT, role TEXT NOT NULL, content TEXT, tool_calls TEXT, tool_call_id TEXT, created_at TEXT NOT NULL)";

/**
 * An in-memory conversation: `append` stores a message and indexes it as MessageStore.append does; with
 * `index: false`, as a conversation stored before migration 0017 (`migrate` then adds the index).
 */
export function memoryConversation(options: { index?: boolean } = {}) {
  let indexed = options.index ?? true;
  const db = new DatabaseSync(":memory:");
  db.exec(MESSAGES);
  if (indexed) db.exec(INDEX);
  const sql = nodeDatabase(db);
  const search = new HistorySearchStore(sql);
  const insert = db.prepare("INSERT INTO messages (role, content, tool_calls, tool_call_id, created_at) VALUES (?, ?, ?, ?, ?) RETURNING seq");
  return {
    db,
    sql,
    search,
    /** Stores `message`, written at `at`. */
    append(message: ChatMessage, at = new Date().toISOString()): number {
      const content = message.role === "user" ? textOf(message) : message.content;
      const toolCalls = message.role === "assistant" && message.tool_calls ? message.tool_calls : null;
      const toolCallId = message.role === "tool" ? message.tool_call_id : null;
      const seq = Number(insert.all(message.role, content, toolCalls && JSON.stringify(toolCalls), toolCallId, at)[0]!.seq);
      if (indexed) search.add(seq, { role: message.role, content, toolCalls, toolCallId });
      return seq;
    },
    /** Migration 0017 on a conversation whose messages were stored before it. */
    migrate(): void {
      db.exec(INDEX);
      search.backfill();
      indexed = true;
    },
  };
}
