-- Images a user message carries (OpenAI image_url parts, https URLs only), as JSON; its text stays in `content`.
ALTER TABLE messages ADD COLUMN images TEXT;
