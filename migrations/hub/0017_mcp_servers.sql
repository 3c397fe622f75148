-- MCP servers the user's hub consumes as apps (src/hub/mcp-server-store.ts, docs/mcp.md "Consume"): registered by the
-- user through the HTTP API (declared_by 'user') or declared by an app in initialize (declared_by the app's name).
-- headers may hold secrets: they are sent to the server and never listed back. What the server lists (tools, prompts,
-- its resources provider) is kept in the tools, skills and providers tables under app = name, as an app's would be.
CREATE TABLE mcp_servers (
  name TEXT PRIMARY KEY,
  url TEXT NOT NULL,
  headers TEXT NOT NULL,
  declared_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  skipped TEXT NOT NULL DEFAULT '[]',
  has_resources INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX mcp_servers_declared_by ON mcp_servers (declared_by);
