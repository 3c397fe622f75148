-- AppHub: one per tenant+user. Apps' registrations and agents, kept across hibernation and eviction.
CREATE TABLE hub_identity (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  tenant TEXT NOT NULL,
  user TEXT NOT NULL
);

CREATE TABLE apps (
  name TEXT PRIMARY KEY,
  version TEXT NOT NULL,
  display_name TEXT,
  session_id TEXT NOT NULL,
  initialized_at TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE providers (
  app TEXT NOT NULL,
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  methods TEXT NOT NULL,
  PRIMARY KEY (app, id)
) WITHOUT ROWID;

CREATE TABLE agents (
  app TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT,
  system_prompt TEXT NOT NULL,
  tools TEXT NOT NULL,
  attached_contexts TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (app, agent_id)
) WITHOUT ROWID;

-- Where a resource pushed without a conversationId goes: the user's most recently active conversation.
CREATE TABLE active_conversation (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  conversation_id TEXT NOT NULL,
  at TEXT NOT NULL
);
