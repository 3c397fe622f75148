-- The few messages that carry images, found without reading the rest: should-compact counts the images the model
-- no longer sees at their placeholder's cost.
CREATE INDEX messages_with_images ON messages (seq) WHERE images IS NOT NULL;
