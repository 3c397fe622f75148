-- Folders apps mount for agents (docs/reminders.md, "Stapled notes"), replaced with the rest of an app's registrations at each initialize.
CREATE TABLE mounts (
  app TEXT NOT NULL,
  path TEXT NOT NULL,
  permissions TEXT NOT NULL,
  description TEXT,
  agents TEXT NOT NULL,
  PRIMARY KEY (app, path)
) WITHOUT ROWID;
