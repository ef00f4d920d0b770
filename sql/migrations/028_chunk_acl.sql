-- 028 (issue 21, item 2): the reader's row-level security on chunks without a lookup per row.
-- Since 014 the chunk policy asked, for every chunk a reader's query touched, "is my version
-- visible?": a probe of document_versions per row (or one hashed set of every visible version,
-- which grows with the corpus), on top of the query's own version check. At 100,000 chunks that
-- made a reader's search up to twice the superuser's.
--
-- Now a chunk carries its version's groups (`acl_groups`, copied at insert by a trigger: a
-- version's groups never change, an access change stages a new version), so the group test is a
-- column of the row itself, and what the groups alone do not decide is kept, small, in
-- `reader_exceptions`: a version whose chunks must stay hidden although their groups match
-- (staged or discarded, or superseded in a document that is deleted now), or visible only to
-- callers who may read the document now (superseded in a document whose live groups do not
-- include the old ones). A superseded version whose groups the live version still holds needs no
-- row: whoever matches it matches the live one too. The policy reads the exceptions the caller's
-- groups do not clear once per statement, as a hashed set; its size grows with unpublished,
-- deleted and narrowed history, never with the corpus. The rule is exactly 019's.
-- Every statement is idempotent.

ALTER TABLE chunks ADD COLUMN IF NOT EXISTS acl_groups text[];

-- Every insert path (staging, an access-only version's copy, a bench loader) gets the version's
-- groups; whatever the insert said is overwritten, so no writer can give a chunk other groups.
CREATE OR REPLACE FUNCTION rag_chunk_groups() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    NEW.acl_groups := (SELECT v.acl_groups FROM document_versions v WHERE v.id = NEW.version_id);
    RETURN NEW;
END $$;
REVOKE ALL ON FUNCTION rag_chunk_groups() FROM PUBLIC;
DROP TRIGGER IF EXISTS chunks_groups_of_version ON chunks;
CREATE TRIGGER chunks_groups_of_version BEFORE INSERT ON chunks
    FOR EACH ROW EXECUTE FUNCTION rag_chunk_groups();

-- Chunks written before this migration: the one rewrite of history this column needs, with the
-- append-only guard (018) held off for it alone, in this transaction.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM chunks WHERE acl_groups IS NULL) THEN
        ALTER TABLE chunks DISABLE TRIGGER chunks_purge_only;
        UPDATE chunks c SET acl_groups = v.acl_groups FROM document_versions v
        WHERE v.id = c.version_id AND c.acl_groups IS NULL;
        ALTER TABLE chunks ENABLE TRIGGER chunks_purge_only;
    END IF;
END $$;
ALTER TABLE chunks ALTER COLUMN acl_groups SET NOT NULL;

CREATE TABLE IF NOT EXISTS reader_exceptions (
    version_id   bigint PRIMARY KEY REFERENCES document_versions(id),
    document_id  bigint NOT NULL REFERENCES documents(id),
    readable_by  text[] NOT NULL  -- groups that may see the version's chunks ('{}': nobody)
);
CREATE INDEX IF NOT EXISTS reader_exceptions_document ON reader_exceptions (document_id);

-- One document's exceptions, recounted from its versions (a handful of rows): called after any
-- change of a version's status or a new version, in the writing transaction.
CREATE OR REPLACE FUNCTION rag_recount_reader_exceptions(doc bigint) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path FROM CURRENT AS $$
    DELETE FROM reader_exceptions WHERE document_id = doc;
    INSERT INTO reader_exceptions (version_id, document_id, readable_by)
    SELECT v.id, v.document_id,
           CASE WHEN v.status = 'superseded' THEN coalesce(live.acl_groups, '{}') ELSE '{}' END
    FROM document_versions v
    LEFT JOIN document_versions live ON live.document_id = v.document_id AND live.status = 'live'
    WHERE v.document_id = doc
      AND (v.status NOT IN ('live', 'superseded')
           OR (v.status = 'superseded' AND (live.id IS NULL OR NOT (v.acl_groups <@ live.acl_groups))));
$$;

CREATE OR REPLACE FUNCTION rag_keep_reader_exceptions() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    PERFORM rag_recount_reader_exceptions(NEW.document_id);
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION rag_recount_reader_exceptions(bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION rag_keep_reader_exceptions() FROM PUBLIC;
DROP TRIGGER IF EXISTS document_versions_reader_exceptions ON document_versions;
CREATE TRIGGER document_versions_reader_exceptions AFTER INSERT OR UPDATE OF status ON document_versions
    FOR EACH ROW EXECUTE FUNCTION rag_keep_reader_exceptions();

-- the state of an index migrated from 027
SELECT rag_recount_reader_exceptions(d.id) FROM documents d
WHERE EXISTS (SELECT 1 FROM document_versions v WHERE v.document_id = d.id AND v.status <> 'live');

-- Only the trigger writes it; the reader reads it only through the policy below.
REVOKE ALL ON reader_exceptions FROM PUBLIC, rag_writer, rag_reader, rag_compliance;
GRANT SELECT ON reader_exceptions TO rag_reader, rag_compliance;
ALTER TABLE reader_exceptions ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS reader_all ON reader_exceptions;
CREATE POLICY reader_all ON reader_exceptions FOR SELECT TO rag_reader USING (true);
DROP POLICY IF EXISTS compliance_all ON reader_exceptions;
CREATE POLICY compliance_all ON reader_exceptions FOR SELECT TO rag_compliance USING (true);

-- The chunk policy: the row's own groups, and no exception the caller's groups leave standing.
-- Both are tests on the row as it is read (by whichever index the query's own conditions choose:
-- the HNSW walk, chunks_tsv, a version's chunks); the groups are one InitPlan parameter and the
-- exceptions one hashed set per statement. The chunk's groups are deliberately not indexed: the
-- policy's parameter is unknown when the statement is planned, so the planner would guess that
-- 0.5% of the chunks match it and read every chunk of a group held by the whole company through
-- such an index instead of chunks_tsv (seen in the plan of a full-text search as the reader). A
-- caller of a few groups is served by document_versions_acl through the query's own filter.
DROP POLICY IF EXISTS reader_groups ON chunks;
CREATE POLICY reader_groups ON chunks FOR SELECT TO rag_reader
    USING (acl_groups && (SELECT rag_session_groups())
           AND NOT (version_id = ANY (SELECT e.version_id FROM reader_exceptions e
                                      WHERE NOT (e.readable_by && (SELECT rag_session_groups())))));

-- A version, by the same rule: its own groups and no exception standing (019 tested a superseded
-- version against document_live_access, a subquery that each reference to document_versions in
-- a reader's statement carried into planning). document_live_access stays, kept by its trigger,
-- for what it records; no policy reads it any more.
DROP POLICY IF EXISTS reader_groups ON document_versions;
CREATE POLICY reader_groups ON document_versions FOR SELECT TO rag_reader
    USING (acl_groups && (SELECT rag_session_groups())
           AND NOT (id = ANY (SELECT e.version_id FROM reader_exceptions e
                              WHERE NOT (e.readable_by && (SELECT rag_session_groups())))));

-- A migrated vector (023) is visible exactly when its chunk is: the chunk's policy applies to the
-- lookup inside, so no version is read here either.
DROP POLICY IF EXISTS reader_groups ON model_vectors;
CREATE POLICY reader_groups ON model_vectors FOR SELECT TO rag_reader
    USING (EXISTS (SELECT 1 FROM chunks c WHERE c.id = model_vectors.chunk_id
                   AND c.acl_groups && (SELECT rag_session_groups())));
