-- The image boundary each compaction records: the images of messages at or before this seq are placeholders in the
-- model's view, those after it stay visible until the next compaction. Images leave the view only when a compaction
-- is recorded, so the prompt's prefix stays byte-stable between compactions. 0: every image is visible (compactions
-- recorded before boundaries existed hid none; turns stored then replay with the count they recorded).
ALTER TABLE compactions ADD COLUMN images_hidden_through INTEGER NOT NULL DEFAULT 0;
