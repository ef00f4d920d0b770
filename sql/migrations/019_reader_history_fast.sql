-- 019 (issues 21 and 22): 018's rule for readers without its cost. 018 asked "may the caller read
-- the document now?" through rag_readable_now(), a SECURITY DEFINER function: never inlined, so
-- every superseded version the policy met cost a function call with its own query. A chunk
-- policy that the planner runs as one hashed set of visible versions met every superseded
-- version of the caller's groups in every search, live ones included: at 100,000 chunks with one
-- document in ten edited once, a reader's live vector search went from ~30 to ~100 ms and an
-- as-of search to ~250-450 ms (bench/bench_search_scale.py).
--
-- Now the groups of each document's live version are kept in document_live_access (one row per
-- document that has a live version; none for a tombstoned one), by a trigger on the version's
-- status change at publish, in the publishing transaction. The policies test a superseded
-- version against that row: a plain, inlinable subquery over a primary key, which the planner
-- may run once per statement as a hashed set or probe per row, by cost. The rule is exactly
-- 018's; the row holds nothing a reader could not learn by setting rag.groups (its own policy
-- shows a reader only the rows of documents it may read now). rag_readable_now() stays (an
-- applied migration is not edited) but no policy calls it.
-- Every statement is idempotent.

CREATE TABLE IF NOT EXISTS document_live_access (
    document_id  bigint PRIMARY KEY REFERENCES documents(id),
    acl_groups   text[] NOT NULL
);
CREATE INDEX IF NOT EXISTS document_live_access_acl ON document_live_access USING gin (acl_groups);

-- Kept in step with the versions: a version that becomes live brings its groups (publish runs
-- supersede -> tombstone -> live, so a document's final state wins); a tombstone removes the row.
CREATE OR REPLACE FUNCTION rag_keep_live_access() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    IF NEW.status = 'live' THEN
        INSERT INTO document_live_access (document_id, acl_groups) VALUES (NEW.document_id, NEW.acl_groups)
        ON CONFLICT (document_id) DO UPDATE SET acl_groups = EXCLUDED.acl_groups;
    ELSIF NEW.status = 'tombstoned' THEN
        DELETE FROM document_live_access WHERE document_id = NEW.document_id;
    END IF;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS document_versions_live_access ON document_versions;
CREATE TRIGGER document_versions_live_access AFTER UPDATE OF status ON document_versions
    FOR EACH ROW WHEN (NEW.status IS DISTINCT FROM OLD.status AND NEW.status IN ('live', 'tombstoned'))
    EXECUTE FUNCTION rag_keep_live_access();

-- the state of an index migrated from 018
INSERT INTO document_live_access (document_id, acl_groups)
SELECT document_id, acl_groups FROM document_versions WHERE status = 'live'
ON CONFLICT (document_id) DO UPDATE SET acl_groups = EXCLUDED.acl_groups;
DELETE FROM document_live_access a
WHERE NOT EXISTS (SELECT 1 FROM document_versions v WHERE v.document_id = a.document_id AND v.status = 'live');

-- Only the trigger writes it (owner's rights): no role can widen a reader's view of the past by
-- writing a row. The schema's default privileges would give the writer every right on a new
-- table; they are taken back here.
REVOKE ALL ON FUNCTION rag_keep_live_access() FROM PUBLIC;
REVOKE ALL ON document_live_access FROM PUBLIC, rag_writer, rag_reader, rag_compliance;
GRANT SELECT ON document_live_access TO rag_reader, rag_compliance;
ALTER TABLE document_live_access ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS reader_groups ON document_live_access;
CREATE POLICY reader_groups ON document_live_access FOR SELECT TO rag_reader
    USING (acl_groups && (SELECT rag_session_groups()));
DROP POLICY IF EXISTS compliance_all ON document_live_access;
CREATE POLICY compliance_all ON document_live_access FOR SELECT TO rag_compliance USING (true);

DROP POLICY IF EXISTS reader_groups ON document_versions;
CREATE POLICY reader_groups ON document_versions FOR SELECT TO rag_reader
    USING (acl_groups && (SELECT rag_session_groups())
           AND (status = 'live'
                OR (status = 'superseded' AND EXISTS (
                    SELECT 1 FROM document_live_access a
                    WHERE a.document_id = document_versions.document_id AND a.acl_groups && (SELECT rag_session_groups())))));
DROP POLICY IF EXISTS reader_groups ON chunks;
CREATE POLICY reader_groups ON chunks FOR SELECT TO rag_reader
    USING (EXISTS (SELECT 1 FROM document_versions v WHERE v.id = chunks.version_id
                   AND v.acl_groups && (SELECT rag_session_groups())
                   AND (v.status = 'live'
                        OR (v.status = 'superseded' AND EXISTS (
                            SELECT 1 FROM document_live_access a
                            WHERE a.document_id = v.document_id AND a.acl_groups && (SELECT rag_session_groups()))))));
