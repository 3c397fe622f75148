-- When each MCP session was last used (src/conversation/mcp-sessions.ts): a session idle for a day ends (the object's
-- alarm), so abandoned sessions and the hub's watchers of their subscriptions do not pile up. Existing sessions count
-- from their start. And which stream events were kept while the session had no stream open: the next stream the
-- client opens, with or without Last-Event-ID, sends them first.
ALTER TABLE mcp_sessions ADD COLUMN last_seen_at TEXT;
UPDATE mcp_sessions SET last_seen_at = created_at;
ALTER TABLE mcp_stream_events ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
