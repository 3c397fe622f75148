-- A provider that notifies its changes (contexts/changed): the hub may reuse its last answer until then.
ALTER TABLE providers ADD COLUMN notifies INTEGER NOT NULL DEFAULT 0;
