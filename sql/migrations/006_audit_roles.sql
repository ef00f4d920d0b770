-- 006: an audit that holds up.
--  * Roles: rag_writer (the pipeline), rag_reader (RAG services; row-level security keyed by the
--    session's groups, `SET rag.groups = 'a,b'`), rag_compliance (reads the history views and the
--    search log, writes nothing). Created NOLOGIN: passwords never live in this repository; the
--    pipeline sets them from RAG_WRITER_PASSWORD / RAG_READER_PASSWORD / RAG_COMPLIANCE_PASSWORD.
--  * Append-only history: grants first (the writer may not rewrite content rows or the search
--    log), triggers second (so even a superuser session fails loudly).
--  * Discarded staging attempts no longer hold a version number.
--  * The search log records the caller, the database user and the runners-up candidates.
-- Every statement is idempotent: roles are cluster-wide and already exist when a second database
-- of the same server is migrated.

DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['rag_writer', 'rag_reader', 'rag_compliance'] LOOP
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
                EXECUTE format('CREATE ROLE %I NOLOGIN', r);
            END IF;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;  -- created meanwhile by the migration of another database on this server
        END;
    END LOOP;
END $$;

-- ---------------------------------------------------------------- search log: who, and runners-up
ALTER TABLE search_log ADD COLUMN IF NOT EXISTS caller text;            -- identity as the caller gave it
ALTER TABLE search_log ADD COLUMN IF NOT EXISTS db_user text;           -- who logged in: not spoofable
ALTER TABLE search_log ALTER COLUMN db_user SET DEFAULT session_user;   -- older rows stay NULL (unknown)
ALTER TABLE search_log ADD COLUMN IF NOT EXISTS candidates jsonb NOT NULL DEFAULT '[]'::jsonb;

-- ---------------------------------------------------------------- version numbers
-- A discarded attempt keeps its row (what was staged stays auditable) but not its number.
ALTER TABLE document_versions DROP CONSTRAINT IF EXISTS document_versions_document_id_version_no_key;
CREATE UNIQUE INDEX IF NOT EXISTS document_versions_number
    ON document_versions (document_id, version_no) WHERE status <> 'discarded';

-- ---------------------------------------------------------------- append-only triggers
CREATE OR REPLACE FUNCTION rag_refuse_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% on %: the index history is append-only; content rows and the search log are never changed or removed',
        TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation',
              HINT = 'write a new version instead; see the compliance section of README.md';
END $$;

-- Rows that may be "updated" only to the values they already hold (the upserts of the pipeline).
CREATE OR REPLACE FUNCTION rag_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF to_jsonb(NEW) IS DISTINCT FROM to_jsonb(OLD) THEN
        RAISE EXCEPTION 'UPDATE on %: rows of this table are immutable once written', TG_TABLE_NAME
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END $$;

-- A version's content is fixed; publishing moves its status forward and opens or closes its
-- validity window once. Nothing else.
CREATE OR REPLACE FUNCTION rag_guard_version_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    lifecycle CONSTANT text[] := ARRAY['status', 'valid_from', 'valid_to'];
BEGIN
    IF (to_jsonb(NEW) - lifecycle) IS DISTINCT FROM (to_jsonb(OLD) - lifecycle) THEN
        RAISE EXCEPTION 'UPDATE of document version %: its content columns are immutable; only status, valid_from and valid_to change at publish', OLD.id
            USING ERRCODE = 'restrict_violation';
    END IF;
    IF (OLD.valid_from IS NOT NULL AND NEW.valid_from IS DISTINCT FROM OLD.valid_from)
       OR (OLD.valid_to IS NOT NULL AND NEW.valid_to IS DISTINCT FROM OLD.valid_to) THEN
        RAISE EXCEPTION 'UPDATE of document version %: a validity window is opened and closed once, never moved', OLD.id
            USING ERRCODE = 'restrict_violation';
    END IF;
    IF NEW.status IS DISTINCT FROM OLD.status
       AND (OLD.status, NEW.status) NOT IN (('staged', 'live'), ('staged', 'tombstoned'),
                                            ('staged', 'discarded'), ('live', 'superseded')) THEN
        RAISE EXCEPTION 'UPDATE of document version %: status % -> % is not a publishing step', OLD.id, OLD.status, NEW.status
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END $$;

DROP TRIGGER IF EXISTS chunks_append_only ON chunks;
CREATE TRIGGER chunks_append_only BEFORE UPDATE OR DELETE ON chunks
    FOR EACH ROW EXECUTE FUNCTION rag_refuse_rewrite();
DROP TRIGGER IF EXISTS chunks_no_truncate ON chunks;
CREATE TRIGGER chunks_no_truncate BEFORE TRUNCATE ON chunks
    FOR EACH STATEMENT EXECUTE FUNCTION rag_refuse_rewrite();

DROP TRIGGER IF EXISTS search_log_append_only ON search_log;
CREATE TRIGGER search_log_append_only BEFORE UPDATE OR DELETE ON search_log
    FOR EACH ROW EXECUTE FUNCTION rag_refuse_rewrite();
DROP TRIGGER IF EXISTS search_log_no_truncate ON search_log;
CREATE TRIGGER search_log_no_truncate BEFORE TRUNCATE ON search_log
    FOR EACH STATEMENT EXECUTE FUNCTION rag_refuse_rewrite();

DROP TRIGGER IF EXISTS document_versions_lifecycle_only ON document_versions;
CREATE TRIGGER document_versions_lifecycle_only BEFORE UPDATE ON document_versions
    FOR EACH ROW EXECUTE FUNCTION rag_guard_version_update();
DROP TRIGGER IF EXISTS document_versions_append_only ON document_versions;
CREATE TRIGGER document_versions_append_only BEFORE DELETE ON document_versions
    FOR EACH ROW EXECUTE FUNCTION rag_refuse_rewrite();
DROP TRIGGER IF EXISTS document_versions_no_truncate ON document_versions;
CREATE TRIGGER document_versions_no_truncate BEFORE TRUNCATE ON document_versions
    FOR EACH STATEMENT EXECUTE FUNCTION rag_refuse_rewrite();

DROP TRIGGER IF EXISTS documents_immutable ON documents;
CREATE TRIGGER documents_immutable BEFORE UPDATE ON documents
    FOR EACH ROW EXECUTE FUNCTION rag_refuse_change();
DROP TRIGGER IF EXISTS documents_append_only ON documents;
CREATE TRIGGER documents_append_only BEFORE DELETE ON documents
    FOR EACH ROW EXECUTE FUNCTION rag_refuse_rewrite();

DROP TRIGGER IF EXISTS embedding_models_immutable ON embedding_models;
CREATE TRIGGER embedding_models_immutable BEFORE UPDATE ON embedding_models
    FOR EACH ROW EXECUTE FUNCTION rag_refuse_change();
DROP TRIGGER IF EXISTS embedding_models_append_only ON embedding_models;
CREATE TRIGGER embedding_models_append_only BEFORE DELETE ON embedding_models
    FOR EACH ROW EXECUTE FUNCTION rag_refuse_rewrite();

-- ---------------------------------------------------------------- grants
-- The writer: full use of the operational tables (runs, work items, quarantine, ...; also those
-- later migrations add, through the default privileges), append-only use of the history.
DO $$
DECLARE
    t text;
BEGIN
    FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = current_schema()
             AND tablename NOT IN ('document_versions', 'chunks', 'search_log', 'documents',
                                   'embedding_models', 'schema_migrations') LOOP
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO rag_writer', t);
    END LOOP;
END $$;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO rag_writer;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO rag_writer;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO rag_writer;
REVOKE UPDATE, DELETE, TRUNCATE ON document_versions, chunks, search_log, documents, embedding_models FROM rag_writer;
GRANT SELECT ON schema_migrations TO rag_writer;
GRANT SELECT, INSERT ON document_versions, chunks, search_log, documents, embedding_models TO rag_writer;
GRANT UPDATE (status, valid_from, valid_to) ON document_versions TO rag_writer;
GRANT UPDATE (uri) ON documents TO rag_writer;          -- the no-op upsert of documents._document_id
GRANT UPDATE (name) ON embedding_models TO rag_writer;  -- the no-op upsert of models.register_model

-- The reader: what a search reads (rows filtered below) and the right to log its searches.
GRANT SELECT ON chunks, document_versions, documents, embedding_models TO rag_reader;
GRANT SELECT ON refusal_calibrations TO rag_reader;   -- search states the threshold it refused by
GRANT INSERT ON search_log TO rag_reader;
GRANT SELECT (id) ON search_log TO rag_reader;          -- INSERT ... RETURNING id
GRANT USAGE ON SEQUENCE search_log_id_seq TO rag_reader;

-- Compliance: the search log here; the history views in sql/views.sql (recreated after this).
GRANT SELECT ON search_log TO rag_compliance;

-- ---------------------------------------------------------------- row-level security
-- The groups of the session: `SET rag.groups = 'a,b'` (or set_config, as the library does per
-- transaction). Unset or empty = no groups = nothing visible.
CREATE OR REPLACE FUNCTION rag_session_groups() RETURNS text[] LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(btrim(g)) FILTER (WHERE btrim(g) <> ''), '{}')
    FROM unnest(string_to_array(current_setting('rag.groups', true), ',')) AS g
$$;

ALTER TABLE document_versions ENABLE ROW LEVEL SECURITY;
ALTER TABLE chunks ENABLE ROW LEVEL SECURITY;
ALTER TABLE documents ENABLE ROW LEVEL SECURITY;

DROP POLICY IF EXISTS writer_all ON document_versions;
CREATE POLICY writer_all ON document_versions TO rag_writer USING (true) WITH CHECK (true);
DROP POLICY IF EXISTS writer_all ON chunks;
CREATE POLICY writer_all ON chunks TO rag_writer USING (true) WITH CHECK (true);
DROP POLICY IF EXISTS writer_all ON documents;
CREATE POLICY writer_all ON documents TO rag_writer USING (true) WITH CHECK (true);

-- Readers see published versions (live or superseded, for as-of searches) of their groups only,
-- the chunks of those versions, and the documents that have one.
DROP POLICY IF EXISTS reader_groups ON document_versions;
CREATE POLICY reader_groups ON document_versions FOR SELECT TO rag_reader
    USING (status IN ('live', 'superseded') AND acl_groups && rag_session_groups());
DROP POLICY IF EXISTS reader_groups ON chunks;
CREATE POLICY reader_groups ON chunks FOR SELECT TO rag_reader
    USING (EXISTS (SELECT 1 FROM document_versions v WHERE v.id = chunks.version_id
                   AND v.status IN ('live', 'superseded') AND v.acl_groups && rag_session_groups()));
DROP POLICY IF EXISTS reader_groups ON documents;
CREATE POLICY reader_groups ON documents FOR SELECT TO rag_reader
    USING (EXISTS (SELECT 1 FROM document_versions v WHERE v.document_id = documents.id
                   AND v.status IN ('live', 'superseded') AND v.acl_groups && rag_session_groups()));
