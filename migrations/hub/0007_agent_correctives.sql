-- An agent's corrective-note settings (loops, tasks claimed done without action, interrupted work), as JSON; NULL
-- when it sets none and the defaults apply.
ALTER TABLE agents ADD COLUMN correctives TEXT;
