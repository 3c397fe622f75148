-- The hash chain of the client's messages the model gateway has consumed (src/gateway/diff.ts): it names the whole
-- history, so a resent history with an earlier message edited no longer continues, and a client that sends no
-- X-Conversation-Id is found by it (the user's hub indexes it: migrations/hub/0015_gateway_heads.sql). Null for a
-- cursor written before; the next resent history gives it one.
ALTER TABLE gateway_cursor ADD COLUMN chain TEXT;
