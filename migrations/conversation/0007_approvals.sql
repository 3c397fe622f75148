-- The user's approval a tool call waits for, recorded against the call. A call is named by the assistant message
-- that made it and its id, since a model may reuse ids across messages. While it is requested the call's result is
-- refused and its group stays pending (never compacted); decided rows stay as the record.
CREATE TABLE tool_approvals (
  call_seq INTEGER NOT NULL,
  tool_call_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('requested', 'approved', 'denied', 'expired')),
  requested_at TEXT NOT NULL,
  decided_at TEXT,
  PRIMARY KEY (call_seq, tool_call_id)
);
