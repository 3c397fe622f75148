-- The conversation's nonce: a random word the runtime's own tags carry and its identity block names, so outside
-- text can never pass for them (src/core/runtime-tag.ts). Conversations whose identity block was frozen before
-- have none; those not yet started get one at their first turn. Resources stored before pass the trust boundary
-- (src/conversation/admit-stored.ts).
ALTER TABLE conversation ADD COLUMN nonce TEXT;
