-- Conversation: one per conversation. History exactly as the model read it, the context ledger,
-- runtime attachments, session resources, turns (idempotency) and context events.
CREATE TABLE conversation (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  conversation_id TEXT NOT NULL,
  tenant TEXT NOT NULL,
  user TEXT NOT NULL,
  agent TEXT,
  agent_contexts TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL,
  ended_at TEXT
);

CREATE TABLE messages (
  seq INTEGER PRIMARY KEY,
  turn_id TEXT,
  role TEXT NOT NULL,
  content TEXT,
  tool_calls TEXT,
  tool_call_id TEXT,
  created_at TEXT NOT NULL
);

CREATE TABLE context_versions (
  kind TEXT NOT NULL,
  key TEXT NOT NULL,
  title TEXT NOT NULL,
  version TEXT NOT NULL,
  turn_id TEXT NOT NULL,
  message_seq INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (kind, key)
) WITHOUT ROWID;

CREATE TABLE attachments (
  key TEXT PRIMARY KEY,
  ref TEXT NOT NULL,
  item_id TEXT,
  created_at TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE resources (
  full_id TEXT PRIMARY KEY,
  app TEXT NOT NULL,
  title TEXT NOT NULL,
  content TEXT NOT NULL,
  summary TEXT,
  type TEXT,
  version TEXT NOT NULL,
  updated_at TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE turns (
  turn_id TEXT PRIMARY KEY,
  request_digest TEXT NOT NULL,
  system_prompt TEXT NOT NULL,
  user_seq INTEGER NOT NULL,
  result TEXT NOT NULL,
  created_at TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE events (
  seq INTEGER PRIMARY KEY,
  turn_id TEXT,
  type TEXT NOT NULL,
  subject TEXT,
  data TEXT NOT NULL,
  at TEXT NOT NULL
);
