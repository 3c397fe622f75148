-- The gateway request whose run is in progress on this conversation (src/gateway/loop.ts): set when its turn takes the
-- client's new part, cleared when it ends. A newer request meanwhile interrupts it: the
-- old run's later writes are refused, and the new message's turn notes the interrupted answer.
ALTER TABLE gateway_cursor ADD COLUMN run_id TEXT;
ALTER TABLE gateway_cursor ADD COLUMN run_turn TEXT;
