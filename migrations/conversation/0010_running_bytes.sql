-- Each message keeps the running total of the conversation's stored weight through it (its UTF-8 bytes plus 128, as
-- src/conversation/message-store.ts weighs a message), so the conversation's cap is checked from one row, not a
-- sum over all of them on every append and turn.
ALTER TABLE messages ADD COLUMN running_bytes INTEGER NOT NULL DEFAULT 0;
UPDATE messages SET running_bytes = totals.running
FROM (
  SELECT seq, SUM(IFNULL(octet_length(content), 0) + IFNULL(octet_length(tool_calls), 0) + IFNULL(octet_length(images), 0) + 128) OVER (ORDER BY seq) AS running
  FROM messages
) AS totals
WHERE messages.seq = totals.seq;
