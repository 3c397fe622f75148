-- What each MCP session's stream was sent (src/conversation/mcp-sessions.ts; docs/mcp.md, "Streams"): the SDK's event
-- store, so a client that lost its stream reconnects with Last-Event-ID and gets what it missed, and a change told
-- while no stream was open waits here. The last 64 of a session are kept.
CREATE TABLE mcp_stream_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL,
  stream_id TEXT NOT NULL,
  message TEXT NOT NULL
);
CREATE INDEX mcp_stream_events_session ON mcp_stream_events (session_id, seq);
