-- 018 (issue 22, item 2): revocation and deletion reach the past for readers; an audited purge.
--
-- 1. A reader's as-of search. Until now rag_reader saw every published version of its groups,
--    live or superseded, for ever: a reader who once had access read revoked or deleted content
--    through `--as-of`. Now a superseded version is visible to the reader only if its groups
--    could read it then (its own acl_groups) AND may read the document now (the document's live
--    version's acl_groups overlap the session's groups). A deleted document (tombstoned: no live
--    version) shows no history to a reader at all. The live index is unchanged. What a user saw
--    at T stays answerable for rag_compliance (the views of sql/views.sql run with their owner's
--    rights) and for `explain`, which runs as the configured login: the search statement's own
--    WHERE clause is not changed, so a replay as the login is still exact. The rule lives in
--    row-level security only.
--    Cost (014's properties kept): the groups are still read once per statement (an InitPlan);
--    `acl_groups && $1` is still an index condition; `status = 'live' OR (...)` evaluates the
--    "readable now" test for superseded rows only, as one primary-key-sized probe of the
--    document's live version (document_versions_one_live). The test is a SECURITY DEFINER
--    function because a policy of document_versions cannot query document_versions itself
--    (PostgreSQL refuses the recursion); it tells a caller nothing the caller could not read by
--    setting `rag.groups` to the same groups.
-- 2. Purge. Content shared by mistake or under a legal order can be removed for every role:
--    `purges` records which version, why, by whom and when (append-only like the other audit
--    tables); the version's chunks lose their text, search prefix, vector and full-text terms
--    (chunks.purged_at says when) and keep everything else (ids, order, section path, pages,
--    offsets, token counts, content hash); the version row (checksum, blob hash, groups, window)
--    is untouched. The append-only trigger of chunks (006) allows exactly that one UPDATE, and
--    only for a version that has a purge record. No rag_* role may purge (no UPDATE on chunks,
--    no INSERT on purges; the writer may read the record, the reader not at all): `rag-pipeline
--    purge` runs as the configured login, the schema's owner.
-- Every statement is idempotent.

-- ---------------------------------------------------------------- 1. the reader's history
-- Whether the document has a live version some of `groups` may read. Owner's rights: the policy
-- of document_versions calls it, and may not read its own table.
CREATE OR REPLACE FUNCTION rag_readable_now(document bigint, groups text[]) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER PARALLEL SAFE SET search_path FROM CURRENT AS $$
    SELECT EXISTS (SELECT 1 FROM document_versions
                   WHERE document_id = document AND status = 'live' AND acl_groups && groups)
$$;
REVOKE ALL ON FUNCTION rag_readable_now(bigint, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION rag_readable_now(bigint, text[]) TO rag_reader;

DROP POLICY IF EXISTS reader_groups ON document_versions;
CREATE POLICY reader_groups ON document_versions FOR SELECT TO rag_reader
    USING (acl_groups && (SELECT rag_session_groups())
           AND (status = 'live'
                OR (status = 'superseded' AND rag_readable_now(document_id, (SELECT rag_session_groups())))));
DROP POLICY IF EXISTS reader_groups ON chunks;
CREATE POLICY reader_groups ON chunks FOR SELECT TO rag_reader
    USING (EXISTS (SELECT 1 FROM document_versions v WHERE v.id = chunks.version_id
                   AND v.acl_groups && (SELECT rag_session_groups())
                   AND (v.status = 'live'
                        OR (v.status = 'superseded' AND rag_readable_now(v.document_id, (SELECT rag_session_groups()))))));
-- A document is visible when one of its versions is, which is exactly when its live version is.
DROP POLICY IF EXISTS reader_groups ON documents;
CREATE POLICY reader_groups ON documents FOR SELECT TO rag_reader
    USING (EXISTS (SELECT 1 FROM document_versions v WHERE v.document_id = documents.id
                   AND v.status = 'live' AND v.acl_groups && (SELECT rag_session_groups())));

-- ---------------------------------------------------------------- 2. purge
CREATE TABLE IF NOT EXISTS purges (
    id          bigserial PRIMARY KEY,
    version_id  bigint NOT NULL UNIQUE REFERENCES document_versions(id),
    reason      text NOT NULL CHECK (btrim(reason) <> '' AND char_length(reason) <= 2000
                                     AND reason !~ '[[:cntrl:]]'),
    purged_by   text,                                      -- the operator as the command gave it
    db_user     text NOT NULL DEFAULT session_user,        -- who logged in: not spoofable
    purged_at   timestamptz NOT NULL DEFAULT now(),
    chunks      integer NOT NULL CHECK (chunks >= 0),      -- chunks whose text and vector went
    blob        text NOT NULL                              -- what became of the stored source bytes
);

DROP TRIGGER IF EXISTS purges_append_only ON purges;
CREATE TRIGGER purges_append_only BEFORE UPDATE OR DELETE ON purges
    FOR EACH ROW EXECUTE FUNCTION rag_refuse_rewrite();
DROP TRIGGER IF EXISTS purges_no_truncate ON purges;
CREATE TRIGGER purges_no_truncate BEFORE TRUNCATE ON purges
    FOR EACH STATEMENT EXECUTE FUNCTION rag_refuse_rewrite();
-- 006's default privileges gave the writer everything on new tables: the purge record is written
-- by the operator alone. The writer reads it (a sync must not store a purged version's bytes
-- again: sync/plan.py); compliance reads it through the purge_record view (sql/views.sql).
REVOKE ALL ON purges FROM PUBLIC, rag_writer, rag_reader, rag_compliance;
REVOKE ALL ON SEQUENCE purges_id_seq FROM PUBLIC, rag_writer, rag_reader, rag_compliance;
GRANT SELECT ON purges TO rag_writer;

ALTER TABLE chunks ADD COLUMN IF NOT EXISTS purged_at timestamptz;
ALTER TABLE chunks ALTER COLUMN embedding DROP NOT NULL;
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'chunks_vector_unless_purged'
                   AND conrelid = 'chunks'::regclass) THEN
        -- every chunk written before had a vector (NOT NULL): nothing to validate
        ALTER TABLE chunks ADD CONSTRAINT chunks_vector_unless_purged
            CHECK (embedding IS NOT NULL OR purged_at IS NOT NULL) NOT VALID;
    END IF;
END $$;

-- The one change a chunk row may undergo: its purge. Text and search prefix emptied, vector and
-- full-text terms dropped (the generated bm25 weights follow the terms), purged_at set to the
-- transaction's time once; every other column as it was; and only for a version with a purge
-- record. Anything else is 006's refusal.
CREATE OR REPLACE FUNCTION rag_guard_chunk_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    purge_shape CONSTANT text[] := ARRAY['text', 'search_prefix', 'embedding', 'tsv', 'bm25', 'purged_at'];
BEGIN
    IF OLD.purged_at IS NULL AND NEW.purged_at = now()
       AND NEW.text = '' AND NEW.search_prefix IS NULL AND NEW.embedding IS NULL AND NEW.tsv = ''::tsvector
       AND (to_jsonb(NEW) - purge_shape) IS NOT DISTINCT FROM (to_jsonb(OLD) - purge_shape)
       AND EXISTS (SELECT 1 FROM purges WHERE version_id = OLD.version_id) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'UPDATE on chunks: the index history is append-only; the only change a chunk takes is its purge (text, search prefix, vector and terms removed, by `rag-pipeline purge`, recorded in purges)'
        USING ERRCODE = 'restrict_violation',
              HINT = 'to remove content, run `rag-pipeline purge URI --reason ...`; see the compliance section of README.md';
END $$;

DROP TRIGGER IF EXISTS chunks_append_only ON chunks;
CREATE TRIGGER chunks_append_only BEFORE DELETE ON chunks
    FOR EACH ROW EXECUTE FUNCTION rag_refuse_rewrite();
DROP TRIGGER IF EXISTS chunks_purge_only ON chunks;
CREATE TRIGGER chunks_purge_only BEFORE UPDATE ON chunks
    FOR EACH ROW EXECUTE FUNCTION rag_guard_chunk_update();
