import type { Database } from "../storage/database";
import { numeric, text } from "../storage/decode";

export interface LoadedTool {
  name: string;
  query: string;
  toolCallId: string;
}

/** The tools a conversation loaded from its catalog and the skills it linked, in its SQLite (migration 0012). */
export class ToolStateStore {
  constructor(private readonly sql: Database) {}

  /** Qualified names, in the order they were loaded. */
  loaded(): string[] {
    return this.sql
      .exec("SELECT name FROM loaded_tools ORDER BY position")
      .toArray()
      .map((r) => text(r, "name"));
  }

  /** Appends the tools not loaded yet, after the others; inside the caller's transaction. */
  load(tools: readonly LoadedTool[], turnId: string | null, at: string): void {
    for (const t of tools) {
      this.sql.exec(
        "INSERT OR IGNORE INTO loaded_tools (name, position, query, tool_call_id, turn_id, loaded_at) VALUES (?, (SELECT IFNULL(MAX(position), 0) + 1 FROM loaded_tools), ?, ?, ?, ?)",
        t.name,
        t.query,
        t.toolCallId,
        turnId,
        at,
      );
    }
  }

  /** Skills read, with the seq of the message that holds each manual as last read. */
  linked(): { name: string; seq: number }[] {
    return this.sql
      .exec("SELECT name, seq FROM linked_skills ORDER BY name")
      .toArray()
      .map((r) => ({ name: text(r, "name"), seq: numeric(r, "seq") }));
  }

  link(name: string, seq: number, turnId: string | null, at: string): void {
    this.sql.exec("INSERT OR REPLACE INTO linked_skills (name, seq, turn_id, linked_at) VALUES (?, ?, ?, ?)", name, seq, turnId, at);
  }
}
