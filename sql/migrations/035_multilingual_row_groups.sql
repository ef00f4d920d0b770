-- 035 (issue 21, item 2, for the vector tables beside chunks): a multilingual vector (034) and a
-- migrated model's vector (023) carry their chunk's groups and version, and the reader's policy
-- tests them on the row itself, as 028 made chunks' policy do.
--
-- Their policies asked, for every row a reader's statement touched, "is my chunk visible?" (an
-- EXISTS on chunks). The planner may run that as one hashed set of every chunk the caller may
-- see, built before the first row: at 100,000 chunks with 30% of them multilingual, 120 ms of a
-- broad caller's hybrid search went into hashing 110,000 chunk ids to read the 54 rows the index
-- walk needed (bench_search_scale.py --multilingual 0.3: hybrid + rerank p50 206 ms against 49 ms
-- without the list). It grew with the corpus.
--
-- A chunk's groups and version never change (an access change stages a new version with new
-- chunks), so copying them is exact. They are set by a trigger from the chunk, whatever the insert
-- said, and no role may update them, so no writer can give a vector other groups than its
-- chunk's. The rule is chunks' own: the row's groups meet the caller's, and no exception the
-- caller's groups leave standing (reader_exceptions, read once per statement as a hashed set whose
-- size grows with unpublished, deleted and narrowed history, never with the corpus). Every
-- statement is idempotent.

CREATE OR REPLACE FUNCTION rag_vector_groups() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    SELECT c.acl_groups, c.version_id INTO NEW.acl_groups, NEW.version_id FROM chunks c WHERE c.id = NEW.chunk_id;
    RETURN NEW;
END $$;
REVOKE ALL ON FUNCTION rag_vector_groups() FROM PUBLIC;

-- Per table: the columns, the trigger, the rows written before this migration filled in once,
-- and the policy. A row's update re-inserts it into the table's HNSW indexes (224 s for 110,000
-- rows of model_vectors here); with them dropped first and built again after, 78 s.
DO $$
DECLARE
    t text;
    needed boolean;
    hnsw text[];
    d text;
BEGIN
    FOREACH t IN ARRAY ARRAY['chunk_multilingual', 'model_vectors'] LOOP
        EXECUTE format('ALTER TABLE %I ADD COLUMN IF NOT EXISTS acl_groups text[],'
                       ' ADD COLUMN IF NOT EXISTS version_id bigint', t);
        EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I', t || '_groups_of_chunk', t);
        EXECUTE format('CREATE TRIGGER %I BEFORE INSERT ON %I FOR EACH ROW EXECUTE FUNCTION rag_vector_groups()',
                       t || '_groups_of_chunk', t);
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE acl_groups IS NULL OR version_id IS NULL)', t) INTO needed;
        IF needed THEN
            SELECT array_agg(indexdef) INTO hnsw FROM pg_indexes
            WHERE schemaname = current_schema() AND tablename = t AND indexdef LIKE '%USING hnsw%';
            FOR d IN SELECT indexname FROM pg_indexes
                     WHERE schemaname = current_schema() AND tablename = t AND indexdef LIKE '%USING hnsw%' LOOP
                EXECUTE format('DROP INDEX %I', d);
            END LOOP;
            EXECUTE format('UPDATE %I x SET acl_groups = c.acl_groups, version_id = c.version_id FROM chunks c'
                           ' WHERE c.id = x.chunk_id AND (x.acl_groups IS NULL OR x.version_id IS NULL)', t);
            SET LOCAL maintenance_work_mem = '1GB';  -- a cap: the graph of a large table built in memory
            FOREACH d IN ARRAY coalesce(hnsw, '{}') LOOP
                EXECUTE d;
            END LOOP;
        END IF;
        EXECUTE format('ALTER TABLE %I ALTER COLUMN acl_groups SET NOT NULL, ALTER COLUMN version_id SET NOT NULL', t);
        EXECUTE format('DROP POLICY IF EXISTS reader_groups ON %I', t);
        EXECUTE format('CREATE POLICY reader_groups ON %I FOR SELECT TO rag_reader'
                       ' USING (acl_groups && (SELECT rag_session_groups())'
                       ' AND NOT (version_id = ANY (SELECT e.version_id FROM reader_exceptions e'
                       ' WHERE NOT (e.readable_by && (SELECT rag_session_groups())))))', t);
    END LOOP;
END $$;

-- The writer inserts into model_vectors (ON CONFLICT DO NOTHING) and prunes; it never updated a
-- row, and now may not (034 gave it no UPDATE on chunk_multilingual).
REVOKE UPDATE ON model_vectors FROM rag_writer;

-- ---------------------------------------------------------------- a migrated model's search
-- A search of a model that a switch made the index's walks the chunks' HNSW index for the chunks
-- staged under it, which right after the switch are none, so the walk visited its tuple limit
-- among the old model's chunks (230 ms at 100,000 chunks, as the superuser too); and after a
-- rollback the same holds for the few vectors of the model in model_vectors among the other's.
-- A search now counts both first (store/vector_plan.py), up to its exact limit, under the
-- caller's own row-level security (an upper bound of what its view holds): the chunks through
-- their versions' model, which this index makes a lookup rather than a scan of every version,
-- and the rows of model_vectors through model_vectors_model. NULL for a model not migrated.
CREATE INDEX IF NOT EXISTS document_versions_model ON document_versions (model_id);
CREATE OR REPLACE FUNCTION rag_model_parts(model integer, lim bigint, OUT native bigint, OUT moved bigint)
LANGUAGE sql STABLE SET search_path FROM CURRENT AS $$
    SELECT (SELECT count(*) FROM (SELECT 1 FROM chunks c JOIN document_versions v ON v.id = c.version_id
                                  WHERE v.model_id = model LIMIT lim) n),
           (SELECT count(*) FROM (SELECT 1 FROM model_vectors mv WHERE mv.model_id = model LIMIT lim) m)
    WHERE rag_model_migrated(model)
$$;
REVOKE ALL ON FUNCTION rag_model_parts(integer, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION rag_model_parts(integer, bigint) TO rag_reader, rag_writer, rag_compliance;
