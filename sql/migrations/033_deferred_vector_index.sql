-- 033 (issue 28): the first load of an empty index builds its HNSW graph once, after the rows.
-- Inserting rows one by one into pgvector's HNSW index cost 8.1 s of the 1,000-document first
-- sync's 9.5 s of index upkeep (bench/README.md, issue 28); building the same index after the
-- load took 1.4 s. The stage step asks for this before it writes: when no chunk of any model
-- exists yet, the dimension's index (009) is dropped, and the step rebuilds it with
-- rag_ensure_vector_index once its rows are in. An index that serves rows is never dropped, and
-- a search of a dimension without its index is exact (store/search.py), so nothing is lost in
-- between. Returns whether the index is absent now (dropped here, or by an earlier failed
-- stage), i.e. whether the caller must rebuild it. Every statement is idempotent.
CREATE OR REPLACE FUNCTION rag_defer_vector_index(dims integer) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    index_name text := format('chunks_embedding_hnsw_%s', dims);
BEGIN
    IF dims IS NULL OR dims < 1 OR dims > 2000 THEN
        RETURN false;
    END IF;
    PERFORM pg_advisory_xact_lock(7300002);  -- as rag_ensure_vector_index: one builder or dropper at a time
    IF to_regclass(index_name) IS NULL THEN
        RETURN true;
    END IF;
    IF EXISTS (SELECT 1 FROM chunks) THEN
        RETURN false;
    END IF;
    -- DROP INDEX waits for every open transaction that read chunks, and while it waits every
    -- new search queues behind it: a reader left idle in a transaction would stall the sync and
    -- all searches. Give up after a second and load into the index as it is.
    BEGIN
        PERFORM set_config('lock_timeout', '1000', true);
        EXECUTE format('DROP INDEX %I', index_name);
    EXCEPTION WHEN lock_not_available THEN
        RETURN false;
    END;
    RETURN true;
END
$$;
REVOKE ALL ON FUNCTION rag_defer_vector_index(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION rag_defer_vector_index(integer) TO rag_writer;
