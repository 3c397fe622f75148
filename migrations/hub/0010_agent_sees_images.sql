-- Whether an agent's model sees images (docs/reminders.md, "Stapled notes"): 1 or 0; NULL when the agent does not say.
ALTER TABLE agents ADD COLUMN sees_images INTEGER;
