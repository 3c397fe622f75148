-- Every turn asks for the newest events of one type and subject (the last don't-mention note, a turn's model.usage):
-- an index keeps that a short range read instead of a scan of a table that grows with every turn.
CREATE INDEX events_by_type ON events (type, subject, seq);
