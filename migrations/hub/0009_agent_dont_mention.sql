-- What an agent's model is told not to mention (docs/reminders.md, "Stapled notes"), as a JSON array; NULL when none.
ALTER TABLE agents ADD COLUMN dont_mention TEXT;
