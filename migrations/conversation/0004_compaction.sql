-- Each message's tokens and the running total through it, so deciding whether to compact, and how much of a long
-- history a request needs, reads two rows instead of the whole history.
ALTER TABLE messages ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN running_tokens INTEGER NOT NULL DEFAULT 0;

-- Compactions are overlays: stored messages are never rewritten. A compaction may summarise messages 1..through_seq
-- (the newest summary replaces the model's view of them; it updates the previous one) and clear old tool results.
CREATE TABLE compactions (
  id INTEGER PRIMARY KEY,
  reason TEXT NOT NULL,
  through_seq INTEGER,
  summary TEXT,
  summary_state TEXT,
  summariser TEXT,
  trust TEXT,
  loss TEXT NOT NULL DEFAULT '[]',
  tokens_before INTEGER NOT NULL,
  tokens_after INTEGER NOT NULL,
  created_at TEXT NOT NULL
);

-- A tool result the model now reads as a stub; the full (redacted) text is in R2 at the stub's pointer.
CREATE TABLE cleared_results (
  seq INTEGER PRIMARY KEY,
  compaction_id INTEGER NOT NULL,
  stub TEXT NOT NULL,
  saved_tokens INTEGER NOT NULL
) WITHOUT ROWID;

-- The compaction a turn's view was built on, so a replay renders the same summary and stubs.
ALTER TABLE turns ADD COLUMN compaction_id INTEGER NOT NULL DEFAULT 0;

-- The conversation's compaction policy (window, thresholds, summariser), as JSON.
ALTER TABLE conversation ADD COLUMN compaction_policy TEXT NOT NULL DEFAULT '{}';
