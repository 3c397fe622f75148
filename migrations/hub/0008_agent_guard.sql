-- An agent's rule guard (docs/tools.md, "The guard"), as JSON; NULL when it sets none and every call is allowed.
ALTER TABLE agents ADD COLUMN guard TEXT;
