-- Where each summary's coverage starts (after an earlier clear it does not start at #1), and the message that
-- carried the latest persona switch note, so a summary or clear that covers it brings the note back.
ALTER TABLE compactions ADD COLUMN from_seq INTEGER NOT NULL DEFAULT 1;
ALTER TABLE conversation ADD COLUMN persona_seq INTEGER;
