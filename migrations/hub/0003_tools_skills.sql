-- Tools and skills apps serve, replaced with their providers and agents at each initialize.
CREATE TABLE tools (
  app TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  input_schema TEXT NOT NULL,
  annotations TEXT,
  PRIMARY KEY (app, name)
) WITHOUT ROWID;

-- A skill's manual and references live in R2 (skills/{tenant}/{user}/{app}/{name}); this row is what the menu needs.
CREATE TABLE skills (
  app TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  references_meta TEXT NOT NULL,
  manual_chars INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  PRIMARY KEY (app, name)
) WITHOUT ROWID;

-- Agents name searchable tools (catalog), skills, and whether the model may browse contexts.
ALTER TABLE agents ADD COLUMN catalog TEXT NOT NULL DEFAULT '[]';
ALTER TABLE agents ADD COLUMN skills TEXT NOT NULL DEFAULT '[]';
ALTER TABLE agents ADD COLUMN browse_contexts INTEGER NOT NULL DEFAULT 0;
