-- The user's conversations, newest first, for GET /v1/conversations: each lives in its own Durable Object, so the
-- hub keeps the index. A row is written when a conversation is created (`seq` orders them: creation order, with no
-- ties), and `ended_at` when it ends. Conversations created before this migration are not listed.
CREATE TABLE conversations (
  seq INTEGER PRIMARY KEY,
  conversation_id TEXT NOT NULL UNIQUE,
  agent TEXT,
  created_at TEXT NOT NULL,
  ended_at TEXT
);
