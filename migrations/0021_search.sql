-- Token search at scale: the strong matches of a query (exact, prefix and one-typo spellings of
-- a symbol or name) come from btree probes, the trigram GIN indexes of 0001 only serve the
-- similarity fallback.
--
-- These btrees are on the lowered text under the "C" collation and searchSQL compares with
-- COLLATE "C": equality and LIKE 'abc%' ranges, as 0020's text_pattern_ops indexes gave, but an
-- expression in the "C" collation cannot match the GIN indexes (default collation), which support
-- = too. Given the ~600 one-typo spellings of an 8-letter query, the planner probed those GIN
-- indexes (174 ms at 100k tokens) rather than a btree (under 1 ms).
CREATE INDEX tokens_symbol_lower_c_idx ON tokens ((lower(symbol) COLLATE "C"));
CREATE INDEX tokens_name_lower_c_idx ON tokens ((lower(name) COLLATE "C"));

-- Nothing else reads 0020's search indexes; these replace them.
DROP INDEX tokens_symbol_lower_idx;
DROP INDEX tokens_name_lower_idx;
