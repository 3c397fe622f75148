-- Which conversations watch which contexts (src/hub/context-watchers.ts): an MCP client subscribed to the context's
-- resource in one of the conversation's sessions (docs/mcp.md, "Subscriptions"). When the context's app says it changed,
-- each watching conversation is told, reads it again, and notifies its subscribers if its version moved.
CREATE TABLE context_watchers (
  ref TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  PRIMARY KEY (ref, conversation_id)
) WITHOUT ROWID;
CREATE INDEX context_watchers_conversation ON context_watchers (conversation_id);
