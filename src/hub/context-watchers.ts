/**
 * The conversations watching each context (migration 0016): an MCP session subscribed to the context's resource there.
 * The hub keeps them so an app's `contexts/changed` reaches exactly the conversations that asked, and no other user's:
 * the hub is the user's own.
 */
export class ContextWatchers {
  constructor(private readonly sql: SqlStorage) {}

  watch(conversationId: string, ref: string, watching: boolean): void {
    if (watching) this.sql.exec("INSERT OR IGNORE INTO context_watchers (ref, conversation_id) VALUES (?, ?)", ref, conversationId);
    else this.sql.exec("DELETE FROM context_watchers WHERE ref = ? AND conversation_id = ?", ref, conversationId);
  }

  /** The conversations watching `ref`. */
  of(ref: string): string[] {
    return this.sql.exec<{ conversation_id: string }>("SELECT conversation_id FROM context_watchers WHERE ref = ?", ref).toArray().map((r) => r.conversation_id);
  }

  /** A conversation that ended watches nothing any more. */
  forget(conversationId: string): void {
    this.sql.exec("DELETE FROM context_watchers WHERE conversation_id = ?", conversationId);
  }
}
