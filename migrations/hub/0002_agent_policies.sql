-- Agents say whether they read memory, and how each of their tools' results is trimmed.
ALTER TABLE agents ADD COLUMN memory INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN result_policies TEXT NOT NULL DEFAULT '{}';
