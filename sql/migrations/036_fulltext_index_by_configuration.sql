-- 036 (issue 21): two indexes for an index that mixes languages. The full-text GIN index holds
-- each chunk's text configuration beside its tsvector, so a search's candidates of one
-- configuration come out of the index without the chunks of another; and the multilingual
-- list's rows (034, with their chunk's groups since 035) are found by their groups.
--
-- A chunk's lexemes are matched under its own configuration (a Czech chunk's with the Czech
-- query terms), but chunks_tsv indexed the tsvector alone. A lexeme rare among the chunks of one
-- configuration the caller sees and common in another's (a company's few Czech or German
-- documents share many stems, names and numbers with its English ones) was taken by the full-text
-- branch as a cheap, rare term, and the index scan then fetched every chunk of the other
-- configuration holding it, each thrown away after its heap fetch: 560 to 650 ms of a broad
-- caller's search at 100,000 chunks (bench_search_scale.py --multilingual 0.3, caller `few
-- other`), against 14 to 33 ms with the configuration inside the index condition. An index of
-- one language is unchanged in what it answers and about as large (33 MB either way at 110,000
-- chunks).
--
-- btree_gin (a contrib module shipped with PostgreSQL, trusted: the database owner may create
-- it) gives GIN its equality on the configuration's oid. The index keeps its name: plans and the
-- reader-policy check (014) refer to it. A query on the tsvector alone still uses it.

CREATE EXTENSION IF NOT EXISTS btree_gin;

DROP INDEX IF EXISTS chunks_tsv;
CREATE INDEX chunks_tsv ON chunks USING gin ((ts_config::oid), tsv);

-- A caller who sees many chunks but few in another language than English (an English-speaking
-- majority; a Czech team's documents) reads the multilingual list's rows its groups pass,
-- exactly (store/multilingual_vectors.py, strategy `rows`): through this index, 3 to 11 ms at
-- 33,000 rows, against 43 ms for a scan of the table, 100 ms for a walk of its HNSW index that
-- filters out nearly every row, and 185 ms for its chunks read by version (70,000 of them).
-- The index is partial on a predicate only that read states (`chunk_id > 0`, true of every row):
-- the planner cannot know how many rows the reader's groups pass (it guesses 0.5%), and offered
-- this index for the policy's own test, it traded a broad caller's walk of the HNSW index (4 ms)
-- for reading every row its groups pass (166 ms at 33,000 rows).
CREATE INDEX IF NOT EXISTS chunk_multilingual_acl ON chunk_multilingual USING gin (acl_groups) WHERE chunk_id > 0;
