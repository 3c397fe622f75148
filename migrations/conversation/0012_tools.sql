-- Tools the model loaded from its agent's catalog with search_tools, in the order they were loaded: they are appended
-- to every later turn's tool list. The set lives beside the history, not in it: compaction and eviction keep it.
CREATE TABLE loaded_tools (
  name TEXT PRIMARY KEY,
  position INTEGER NOT NULL,
  query TEXT NOT NULL,
  tool_call_id TEXT NOT NULL,
  turn_id TEXT,
  loaded_at TEXT NOT NULL
);

-- Skills whose manual the model read with read_skill ("linked"): the message that holds the manual as read. Once a
-- summary covers that message, the skills menu tells the model the skill is still available to read again.
CREATE TABLE linked_skills (
  name TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  turn_id TEXT,
  linked_at TEXT NOT NULL
);
