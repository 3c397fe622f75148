-- Where each conversation the model gateway speaks in has got to in its client's history (src/hub/gateway-heads.ts):
-- the hash chain of the client messages it has consumed, for its agent. A request without X-Conversation-Id whose
-- history extends one of these continues that conversation. One row per conversation, moved with its cursor.
CREATE TABLE gateway_heads (
  conversation_id TEXT PRIMARY KEY,
  agent TEXT NOT NULL,
  chain TEXT NOT NULL,
  consumed INTEGER NOT NULL,
  moved_at TEXT NOT NULL
);
CREATE INDEX gateway_heads_chain ON gateway_heads (chain);
