-- The user's approval a tool call waits for, recorded against the call. While it is requested the call's result
-- is refused and the call's group stays pending (never compacted); decided rows stay as the record.
CREATE TABLE tool_approvals (
  tool_call_id TEXT PRIMARY KEY,
  tool TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('requested', 'approved', 'denied', 'expired')),
  requested_at TEXT NOT NULL,
  decided_at TEXT
);
