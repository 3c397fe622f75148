-- Each catalog tool's embedding, for search_tools' ranking by meaning (docs/tools.md, "Ranking by meaning"). Written
-- in the background after an app's initialize, or at search time when missing. `text_hash`: SHA-256 of the model id
-- and the text embedded (name, description, parameters), so a vector whose tool changed is never used. `vector`: the
-- unit vector as little-endian float32.
CREATE TABLE tool_vectors (
  app TEXT NOT NULL,
  name TEXT NOT NULL,
  text_hash TEXT NOT NULL,
  vector BLOB NOT NULL,
  PRIMARY KEY (app, name)
) WITHOUT ROWID;
