-- The agent's tool-result policies as of its latest turn: appended results are trimmed by them.
ALTER TABLE conversation ADD COLUMN result_policies TEXT NOT NULL DEFAULT '{}';

-- The stored messages a turn's model input held, as [from, to] seq ranges (a budget may have left groups out),
-- so a replay returns exactly that; empty for turns that read the whole history.
ALTER TABLE turns ADD COLUMN history_view TEXT NOT NULL DEFAULT '[]';
