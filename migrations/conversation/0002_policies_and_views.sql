-- The agent's tool-result policies as of its latest turn: appended results are trimmed by them.
ALTER TABLE conversation ADD COLUMN result_policies TEXT NOT NULL DEFAULT '{}';

-- Where a turn's model view of history began (a budget may have left older groups out), so a replay matches it.
ALTER TABLE turns ADD COLUMN history_from INTEGER NOT NULL DEFAULT 0;
