-- PostgreSQL's 0022 drops the foreign key from round_metrics to rounds (its per-row trigger was
-- more than half of a round's insert). SQLite checks a foreign key with one lookup in rounds'
-- primary key inside the same page cache, a small share of its insert, and dropping one would
-- mean rebuilding round_metrics: it keeps the key. The version is here so both dialects keep one
-- numbering.

