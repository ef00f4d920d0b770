-- 015 (issue 21, item 1): full-text ranking whose cost does not grow with the corpus, and whose
-- statistics tell a caller nothing about documents it may not read.
--
-- BM25 needs, per query term, its document frequency (df) and the number of chunks, and per chunk
-- its term weights. Before, every search counted both over every chunk matching any query term.
-- Now they are kept, and kept per ACCESS SET (a version's acl_groups array):
-- * fts_acl_terms: per (access set, configuration, lexeme), how many LIVE content chunks of that
--   set hold the lexeme (df) and the largest weight it has in any of them (max_weight, the
--   MaxScore bound: raised at publish, never lowered, so a bound over chunks that left is still
--   a bound). fts_acl_corpus: the live chunk count per access set. Both change in the publishing
--   transaction (store/bm25_stats.py), so statistics and index change at the same instant.
--   A caller's df is the sum over the access sets its groups overlap: exactly the df over the
--   chunks it may see (each chunk is in one access set), as the per-query count was. Row-level
--   security gives the reader role only those rows: no role learns from a frequency whether a
--   word occurs in documents it may not read (a single global df would).
-- * chunks.bm25: the chunk's document-side weights w(t,d) = tf(k1+1) / (tf + k1(1-b+b dl/pivot))
--   as a pgvector sparsevec, a column generated when the chunk is written. Its index is a hash of the lexeme
--   (rag_term_id): no vocabulary table, so no term id reveals that a word was ever indexed; a
--   chunk's score is the inner product with the query's idf vector of the chunk's configuration.
--   The length pivot is a constant, not the corpus' average length: a chunk's weights then never
--   change after staging (chunks stay append-only) and depend on nothing but the chunk.
-- Every statement is idempotent.

-- The tf part of BM25 for a term occurring tf times in a chunk of dl tokens: the one definition.
-- k1 0.9, b 0.4 (Anserini's BEIR defaults, as before); pivot 184 tokens (store/bm25.py says why).
CREATE OR REPLACE FUNCTION rag_bm25_tf(tf float8, dl integer) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT tf * (0.9 + 1) / (tf + 0.9 * (1 - 0.4 + 0.4 * dl / 184.0))
$$;

-- The sparsevec index of a lexeme: 1 .. 999,999,999 from its MD5 (stable across servers and
-- versions). Two lexemes of one chunk that collide share an index (their weights add up); the
-- final scores are recomputed from the tsvector, so a collision can only reorder candidates.
CREATE OR REPLACE FUNCTION rag_term_id(lexeme text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT ((('x' || left(md5(lexeme), 8))::bit(32)::integer & 2147483647) % 999999999) + 1
$$;

-- A chunk's weights (dimension: pgvector's largest, so every vector and the query's agree).
CREATE OR REPLACE FUNCTION rag_bm25_weights(tsv tsvector, dl integer) RETURNS sparsevec
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT ('{' || coalesce(string_agg(x.id || ':' || x.w::float4, ',' ORDER BY x.id), '') || '}/1000000000')::sparsevec
    FROM (SELECT rag_term_id(u.lexeme) AS id, sum(rag_bm25_tf(coalesce(array_length(u.positions, 1), 1), dl)) AS w
          FROM unnest(tsv) u GROUP BY 1) x
$$;

CREATE TABLE IF NOT EXISTS fts_acl_terms (
    acl_groups  text[] NOT NULL,
    ts_config   regconfig NOT NULL,
    lexeme      text NOT NULL,
    df          bigint NOT NULL,  -- no CHECK: an upsert's proposed row carries a negative delta
    max_weight  float8 NOT NULL CHECK (max_weight >= 0),
    PRIMARY KEY (ts_config, lexeme, acl_groups)
);

CREATE TABLE IF NOT EXISTS fts_acl_corpus (
    acl_groups  text[] NOT NULL,
    ts_config   regconfig NOT NULL,  -- so a search knows the configurations of what it may see
    chunks      bigint NOT NULL,  -- likewise
    PRIMARY KEY (acl_groups, ts_config)
);

-- Generated at insert from the chunk's own columns by every path that writes chunks (staging,
-- an access-only version's copy); adding it computes it for every existing chunk (a table rewrite
-- that fires no row trigger: the rows' content is unchanged).
ALTER TABLE chunks ADD COLUMN IF NOT EXISTS bm25 sparsevec
    GENERATED ALWAYS AS (rag_bm25_weights(tsv, token_count)) STORED;

ALTER TABLE fts_acl_terms ENABLE ROW LEVEL SECURITY;
ALTER TABLE fts_acl_corpus ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS writer_all ON fts_acl_terms;
CREATE POLICY writer_all ON fts_acl_terms TO rag_writer USING (true) WITH CHECK (true);
DROP POLICY IF EXISTS writer_all ON fts_acl_corpus;
CREATE POLICY writer_all ON fts_acl_corpus TO rag_writer USING (true) WITH CHECK (true);
-- the reader's rows: the access sets its groups overlap (groups read once per statement, 014)
DROP POLICY IF EXISTS reader_groups ON fts_acl_terms;
CREATE POLICY reader_groups ON fts_acl_terms FOR SELECT TO rag_reader
    USING (acl_groups && (SELECT rag_session_groups()));
DROP POLICY IF EXISTS reader_groups ON fts_acl_corpus;
CREATE POLICY reader_groups ON fts_acl_corpus FOR SELECT TO rag_reader
    USING (acl_groups && (SELECT rag_session_groups()));
GRANT SELECT, INSERT, UPDATE, DELETE ON fts_acl_terms, fts_acl_corpus TO rag_writer;
GRANT SELECT ON fts_acl_terms, fts_acl_corpus TO rag_reader;

-- The model of the live index: the newest live content version's (a sync never mixes models).
-- Index metadata, not content, so every role may know it, whatever its groups: as the reader,
-- the same lookup under row-level security let the planner sort all of a caller's visible
-- versions (it cannot see how many the groups pass) to find the newest one.
CREATE OR REPLACE FUNCTION rag_live_model() RETURNS integer
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
    SELECT model_id FROM document_versions WHERE status = 'live' AND kind = 'content' AND model_id IS NOT NULL
    ORDER BY id DESC LIMIT 1
$$;
REVOKE ALL ON FUNCTION rag_live_model() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION rag_live_model() TO rag_reader, rag_writer, rag_compliance;

-- Backfill an existing index: the statistics of its live content chunks.

INSERT INTO fts_acl_corpus (acl_groups, ts_config, chunks)
SELECT v.acl_groups, c.ts_config, count(*) FROM chunks c JOIN document_versions v ON v.id = c.version_id
WHERE v.status = 'live' AND v.kind = 'content' GROUP BY 1, 2
ON CONFLICT DO NOTHING;

INSERT INTO fts_acl_terms (acl_groups, ts_config, lexeme, df, max_weight)
SELECT v.acl_groups, c.ts_config, u.lexeme, count(*),
       max(rag_bm25_tf(coalesce(array_length(u.positions, 1), 1), c.token_count))
FROM chunks c JOIN document_versions v ON v.id = c.version_id CROSS JOIN LATERAL unnest(c.tsv) u
WHERE v.status = 'live' AND v.kind = 'content' GROUP BY 1, 2, 3
ON CONFLICT DO NOTHING;
