-- 014 (issue 21): row-level security that costs nothing. The reader role (rag_reader, what every
-- CLI search acts as) keeps exactly the guarantee of migration 006: it sees published versions
-- (live or superseded) of its groups only, the chunks of those versions, and the documents that
-- have one; never a staged, discarded or tombstoned version, nor any row of another group. What
-- changes is how the planner can use that rule.
--
-- 1. The caller's groups are read once per statement, not once per row. 006's policies called
--    rag_session_groups() in every row's check; a SQL function with an aggregate is never
--    inlined, so each row parsed `rag.groups` again and no index could serve the check. Here
--    the call is an uncorrelated scalar subquery, `(SELECT rag_session_groups())`, which the
--    planner runs once as an InitPlan; its result is a parameter, so `acl_groups && $1` is an
--    index condition on document_versions_acl (GIN, migration 009), and `status`, `id` and
--    `document_id` are compared with leakproof operators over indexed columns.
-- 2. A chunk's check is a lookup of its version by primary key. The planner may run it per row
--    (an index probe: a vector index walk reads few rows) or as one hashed set of the visible
--    version ids (a full-text or corpus scan reads many): its own choice, by cost.
-- 3. Full-text matching may use the GIN index as reader. PostgreSQL evaluates a table's policy
--    before any qualifier of the query whose function is not LEAKPROOF, and never makes such a
--    qualifier an index condition; `tsvector @@ tsquery` (ts_match_vq) is not marked leakproof,
--    so every full-text branch of a reader's search filtered all visible chunks one by one
--    instead of reading chunks_tsv. ts_match_vq is leakproof in fact: no side effects, and no
--    error or other output that depends on the row beyond its boolean result (it only compares
--    lexemes of two already valid values). Marking a function LEAKPROOF needs a superuser; a
--    migration run without one leaves it as it is, with a NOTICE: searches stay exactly as
--    correct, only the reader's full-text branch stays as slow as before. The mark lives in
--    this database's catalogue; a dump/restore or major-version upgrade does not carry it.
--    `&&` on arrays (arrayoverlap) stays unmarked: it is generic over element types whose
--    equality may not be leakproof, and the policy's own `&&` already reaches the GIN index.
-- Every statement is idempotent.

-- The groups of the session: unchanged from 006 (`SET rag.groups = 'a,b'`, trimmed; unset or
-- empty = no groups = nothing visible). Called only once per statement by the policies below.
CREATE OR REPLACE FUNCTION rag_session_groups() RETURNS text[] LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(btrim(g)) FILTER (WHERE btrim(g) <> ''), '{}')
    FROM unnest(string_to_array(current_setting('rag.groups', true), ',')) AS g
$$;

DROP POLICY IF EXISTS reader_groups ON document_versions;
CREATE POLICY reader_groups ON document_versions FOR SELECT TO rag_reader
    USING (status IN ('live', 'superseded') AND acl_groups && (SELECT rag_session_groups()));
DROP POLICY IF EXISTS reader_groups ON chunks;
CREATE POLICY reader_groups ON chunks FOR SELECT TO rag_reader
    USING (EXISTS (SELECT 1 FROM document_versions v WHERE v.id = chunks.version_id
                   AND v.status IN ('live', 'superseded') AND v.acl_groups && (SELECT rag_session_groups())));
DROP POLICY IF EXISTS reader_groups ON documents;
CREATE POLICY reader_groups ON documents FOR SELECT TO rag_reader
    USING (EXISTS (SELECT 1 FROM document_versions v WHERE v.document_id = documents.id
                   AND v.status IN ('live', 'superseded') AND v.acl_groups && (SELECT rag_session_groups())));

DO $$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF;
    ELSE
        RAISE NOTICE 'migration 014: not a superuser, so ts_match_vq (tsvector @@ tsquery) stays unmarked; '
                     'as rag_reader, full-text search cannot use the GIN index chunks_tsv. A superuser may run: '
                     'ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF';
    END IF;
END $$;
