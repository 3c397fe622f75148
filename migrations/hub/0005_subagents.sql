-- Agents name their subagents: the agents the model may hand a task to with the runtime's `delegate` tool, qualified.
ALTER TABLE agents ADD COLUMN subagents TEXT NOT NULL DEFAULT '[]';
