-- 009 (issue 12): search that scales. chunks.embedding has no fixed dimension (one column holds
-- every model's vectors), so a vector index is built per dimension: a partial HNSW index over the
-- expression embedding::vector(D) for the rows with D dimensions. Queries that cast the same way
-- and repeat the predicate `vector_dims(embedding) = D` can use it (rag_pipeline/store/search.py).

-- Builds the index of one dimension once. SECURITY DEFINER: the pipeline's role (rag_writer)
-- records models but does not own chunks, and only an owner may create an index. The dimension
-- is an integer that reaches the DDL only through format('%s'); pgvector's HNSW takes at most
-- 2,000 dimensions for `vector`, so larger models get no index (their searches stay exact).
CREATE OR REPLACE FUNCTION rag_ensure_vector_index(dims integer) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    index_name text := format('chunks_embedding_hnsw_%s', dims);
BEGIN
    IF dims IS NULL OR dims < 1 OR dims > 2000 THEN
        RETURN NULL;
    END IF;
    PERFORM pg_advisory_xact_lock(7300002);  -- two first recordings of one dimension build it once
    IF to_regclass(index_name) IS NULL THEN
        EXECUTE format('CREATE INDEX %I ON chunks USING hnsw ((embedding::vector(%s)) vector_cosine_ops)'
                       ' WHERE vector_dims(embedding) = %s', index_name, dims, dims);
    END IF;
    RETURN index_name;
END
$$;
REVOKE ALL ON FUNCTION rag_ensure_vector_index(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION rag_ensure_vector_index(integer) TO rag_writer;

-- Models recorded before this migration.
SELECT rag_ensure_vector_index(d.dimension) FROM (SELECT DISTINCT dimension FROM embedding_models) d;

-- A selective group filter finds its few versions through this index instead of scanning all.
CREATE INDEX IF NOT EXISTS document_versions_acl ON document_versions USING gin (acl_groups);

-- How each search's vector branch ran: strategy (exact or index), the filter's row estimate and
-- the index settings. NULL for searches logged before this migration.
ALTER TABLE search_log ADD COLUMN IF NOT EXISTS strategy jsonb;
