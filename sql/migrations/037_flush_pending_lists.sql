-- 037 (issue 21): a sync leaves no GIN pending list for searches to scan.
--
-- A GIN index built with fastupdate (PostgreSQL's default) takes new rows into an unsorted
-- pending list, merged into the index only when the list outgrows gin_pending_list_limit (4 MB)
-- or when (auto)vacuum runs. Every search that scans the index reads the whole pending list and
-- tests each of its entries against the query, so after a sync the full-text branch paid for the
-- chunks it had just written until autovacuum came by (at 100,000 chunks, after 21,000 more rows
-- inserted). bench/bench_pending_lists.py at 100,000 chunks, a writer's 9,000 chunks pending (488
-- pages, the list nearly full): a broad caller's full text 41 / 115 ms (p50 / p95) with the list,
-- 28 / 57 merged; hybrid + rerank 58 / 132 against 40 / 80. Merging took 0.1 s.
--
-- The sync keeps the cheap batched inserts and merges what it wrote itself, once, at the end of
-- its stage and publish steps (store/index_upkeep.py). Merging a pending list needs the index's
-- owner, so the function runs as the owner and takes no argument: it merges the pending lists of
-- the GIN indexes of this schema that its owner owns, and returns the pages merged (0 when there
-- was nothing to merge, which costs one metapage read per index).
CREATE OR REPLACE FUNCTION rag_flush_pending_lists() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    merged bigint := 0;
    idx regclass;
BEGIN
    FOR idx IN
        SELECT c.oid::regclass FROM pg_class c
        JOIN pg_am a ON a.oid = c.relam
        JOIN pg_index i ON i.indexrelid = c.oid
        WHERE a.amname = 'gin' AND i.indisvalid AND i.indisready
          AND c.relnamespace = (SELECT n.oid FROM pg_namespace n WHERE n.nspname = current_schema())
          AND c.relowner = (SELECT r.oid FROM pg_roles r WHERE r.rolname = current_user)
        ORDER BY c.oid
    LOOP
        merged := merged + gin_clean_pending_list(idx);
    END LOOP;
    RETURN merged;
END
$$;
REVOKE ALL ON FUNCTION rag_flush_pending_lists() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION rag_flush_pending_lists() TO rag_writer;
