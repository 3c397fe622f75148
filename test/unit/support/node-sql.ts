/**
 * A conversation's messages table and search_history's index in Node's own SQLite (node:sqlite, Node 22), behind the
 * same narrow interface the Durable Object's `ctx.storage.sql` fills: the store's SQL runs here unchanged.
 */
import { readFileSync } from "node:fs";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { SqlExec } from "../../../src/conversation/history-search-store";
import { HistorySearchStore } from "../../../src/conversation/history-search-store";
import { textOf, type ChatMessage } from "../../../src/protocol/messages";

const INDEX = readFileSync(new URL("../../../migrations/conversation/0017_history_search.sql", import.meta.url), "utf8");

/** `exec` over a DatabaseSync, each statement prepared once. */
export function nodeSql(db: DatabaseSync): SqlExec {
  const statements = new Map<string, StatementSync>();
  return {
    exec(query, ...bindings) {
      let statement = statements.get(query);
      if (!statement) statements.set(query, (statement = db.prepare(query)));
      return statement.all(...bindings);
    },
  };
}

/** The columns of `messages` the index reads, as the conversation's migrations leave them. */
const MESSAGES = "CREATE TABLE messages (seq INTEGER PRIMARY KEY, turn_id TEXT, role TEXT NOT NULL, content TEXT, tool_calls TEXT, tool_call_id TEXT, created_at TEXT NOT NULL)";

/**
 * An in-memory conversation: `append` stores a message and indexes it as MessageStore.appendMessage does; with
 * `index: false`, as a conversation stored before migration 0017 (`migrate` then adds the index).
 */
export function memoryConversation(options: { index?: boolean } = {}) {
  let indexed = options.index ?? true;
  const db = new DatabaseSync(":memory:");
  db.exec(MESSAGES);
  if (indexed) db.exec(INDEX);
  const sql = nodeSql(db);
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
