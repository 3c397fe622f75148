-- Hooks apps register at named points of the turn (docs/hooks.md), replaced with the rest of an app's registrations at each initialize.
CREATE TABLE hooks (
  app TEXT NOT NULL,
  name TEXT NOT NULL,
  point TEXT NOT NULL,
  agents TEXT NOT NULL,
  tools TEXT,
  sort_order INTEGER NOT NULL,
  deadline_ms INTEGER NOT NULL,
  fail_mode TEXT NOT NULL,
  PRIMARY KEY (app, name)
) WITHOUT ROWID;
