-- search_history's index (docs/tools.md, "Searching earlier messages"): the words of every stored message, keyed by its
-- seq (the rowid), kept up to date in the transaction that stores the message. Contentless: the text stays in
-- `messages` only, and a hit's excerpt is cut from there. Porter stems English words; accents are folded.
CREATE VIRTUAL TABLE history_search USING fts5(body, content = '', tokenize = 'porter unicode61 remove_diacritics 2');
