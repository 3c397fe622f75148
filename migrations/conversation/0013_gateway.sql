-- The model gateway's cursor over the client's side of the conversation (src/gateway/diff.ts): how many of the
-- client's messages (its system messages aside) the conversation has consumed, counting the answers the gateway
-- returned, the hash of the last of them, and whether the model still owes an answer to them (then a request that
-- brings nothing new, or the same last message again, is a retry and continues).
CREATE TABLE gateway_cursor (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  consumed INTEGER NOT NULL,
  last_hash TEXT NOT NULL,
  awaiting INTEGER NOT NULL,
  updated_at TEXT NOT NULL
);
