-- Whether an agent's model may search the conversation's earlier messages (search_history) from the first turn: 1 or 0
-- (docs/tools.md, "Searching earlier messages"). Without it, the tool is offered from the first summary or clear on.
ALTER TABLE agents ADD COLUMN search_history INTEGER NOT NULL DEFAULT 0;
