-- MCP sessions served over this conversation (src/conversation/mcp-sessions.ts; docs/mcp.md, "Serve"): one row per
-- session an MCP client initialised at /mcp/{app}/{agent}, and the resources each subscribed to, with the version last
-- read or announced, so a change is announced once. A session outlives the object's eviction: a later request with its
-- Mcp-Session-Id finds it here.
CREATE TABLE mcp_sessions (
  session_id TEXT PRIMARY KEY,
  agent TEXT NOT NULL,
  protocol_version TEXT NOT NULL,
  client TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE mcp_subscriptions (
  session_id TEXT NOT NULL,
  uri TEXT NOT NULL,
  ref TEXT NOT NULL,
  version TEXT,
  PRIMARY KEY (session_id, uri)
) WITHOUT ROWID;
CREATE INDEX mcp_subscriptions_ref ON mcp_subscriptions (ref);
