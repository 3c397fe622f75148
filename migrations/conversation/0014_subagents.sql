-- Subagents (docs/tools.md, "Subagents"). A child conversation records the conversation whose `delegate` call started
-- it, that call, and its depth (0 for a conversation nobody delegated; a child is its parent's depth + 1).
ALTER TABLE conversation ADD COLUMN parent_conversation_id TEXT;
ALTER TABLE conversation ADD COLUMN parent_tool_call_id TEXT;
ALTER TABLE conversation ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;

-- A parent's `delegate` calls and the child conversation each started: the call stays open while the child runs
-- (status 'running'); the child's final answer closes it ('completed'); a new user message that closes the call
-- first leaves the child 'abandoned'. `call_seq` is the message that made the call (ids may repeat across messages).
CREATE TABLE delegations (
  child_conversation_id TEXT PRIMARY KEY,
  tool_call_id TEXT NOT NULL,
  call_seq INTEGER NOT NULL,
  agent TEXT NOT NULL,
  depth INTEGER NOT NULL,
  turn_id TEXT NOT NULL,
  status TEXT NOT NULL,
  child_turn_ids TEXT NOT NULL,
  created_at TEXT NOT NULL,
  completed_at TEXT
) WITHOUT ROWID;
CREATE INDEX delegations_by_call ON delegations (tool_call_id, status);
