-- The identity block, frozen when the conversation's first turn is assembled (persona and the part of the day it
-- started), and the agent whose persona is in effect now (a switch appends a note instead of changing the block).
ALTER TABLE conversation ADD COLUMN identity TEXT;
ALTER TABLE conversation ADD COLUMN persona_agent TEXT;
