-- 023 (issue 26): change the embedding model without downtime.
--
-- Chunks are history (append-only, 006/017): a chunk keeps the vector of the model its version
-- was embedded with (chunks.model_id, chunks.embedding) for ever. A migration embeds the live
-- chunks with another model beside them, into model_vectors (one row per chunk and model), and
-- then switches the index's model in one transaction (model_switches). From then on a search
-- reads, for each chunk, the vector of the model in force for its view: the chunk's own when the
-- chunk was embedded with that model, else its row in model_vectors. The index's model as of a
-- time T is the newest switch at or before T; before the first switch it is what it always was
-- (the model of the newest visible content version). Every statement is idempotent.

-- ---------------------------------------------------------------- vectors beside the chunks
CREATE TABLE IF NOT EXISTS model_vectors (
    chunk_id    bigint NOT NULL REFERENCES chunks(id),
    model_id    integer NOT NULL REFERENCES embedding_models(id),
    embedding   vector NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chunk_id, model_id)   -- a batch re-run after a kill inserts nothing twice
);
CREATE INDEX IF NOT EXISTS model_vectors_model ON model_vectors (model_id, chunk_id);

-- How to load a model the index was migrated to: the model as `migrate-model --to` named it (a
-- folder or a cached name; NULL = the packaged default) and the backend whose numerics its
-- identity records. Searches after a switch load the index's model from here when the
-- configuration still names the old one.
CREATE TABLE IF NOT EXISTS model_sources (
    model_id     integer PRIMARY KEY REFERENCES embedding_models(id),
    model        text,
    backend      text NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT now()
);

-- One row per migration attempt: what it migrates to, how far it got, the gate's report.
CREATE TABLE IF NOT EXISTS model_migrations (
    id           bigserial PRIMARY KEY,
    from_model   integer NOT NULL REFERENCES embedding_models(id),
    to_model     integer NOT NULL REFERENCES embedding_models(id),
    kind         text NOT NULL DEFAULT 'migrate' CHECK (kind IN ('migrate', 'rollback')),
    status       text NOT NULL DEFAULT 'running'
                 CHECK (status IN ('running', 'switched', 'gate_failed', 'failed')),
    started_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz,
    counts       jsonb NOT NULL DEFAULT '{}'::jsonb,
    gate         jsonb,
    error        text
);
-- At most one migration runs at a time (a second one continues the first: resumable).
CREATE UNIQUE INDEX IF NOT EXISTS model_migrations_one_running ON model_migrations ((true)) WHERE status = 'running';

-- The index's model switches, append-only: the model in force at T is the newest row at or before T.
CREATE TABLE IF NOT EXISTS model_switches (
    id            bigserial PRIMARY KEY,
    switched_at   timestamptz NOT NULL DEFAULT now(),
    from_model    integer NOT NULL REFERENCES embedding_models(id),
    to_model      integer NOT NULL REFERENCES embedding_models(id),
    migration_id  bigint REFERENCES model_migrations(id),
    db_user       text NOT NULL DEFAULT session_user
);
CREATE INDEX IF NOT EXISTS model_switches_time ON model_switches (switched_at DESC, id DESC);

DROP TRIGGER IF EXISTS model_switches_immutable ON model_switches;
CREATE TRIGGER model_switches_immutable BEFORE UPDATE ON model_switches
    FOR EACH ROW EXECUTE FUNCTION rag_refuse_change();
DROP TRIGGER IF EXISTS model_switches_append_only ON model_switches;
CREATE TRIGGER model_switches_append_only BEFORE DELETE ON model_switches
    FOR EACH ROW EXECUTE FUNCTION rag_refuse_rewrite();

-- ---------------------------------------------------------------- the model in force
-- The index's model as of `at` (NULL: now): the newest switch at or before it, else the model of
-- the newest live content version (now) as before this migration. Index metadata: every role may
-- read it, whatever its groups (like rag_live_model, 015).
CREATE OR REPLACE FUNCTION rag_switched_model(at timestamptz) RETURNS integer
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
    SELECT to_model FROM model_switches WHERE at IS NULL OR switched_at <= at
    ORDER BY switched_at DESC, id DESC LIMIT 1
$$;
REVOKE ALL ON FUNCTION rag_switched_model(timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION rag_switched_model(timestamptz) TO rag_reader, rag_writer, rag_compliance;

CREATE OR REPLACE FUNCTION rag_live_model() RETURNS integer
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
    SELECT coalesce(rag_switched_model(NULL),
                    (SELECT model_id FROM document_versions WHERE status = 'live' AND kind = 'content'
                     AND model_id IS NOT NULL ORDER BY id DESC LIMIT 1))
$$;

-- Whether some chunk has a vector of `model` in model_vectors: search then reads vectors there too
-- (index metadata, as above: a reader's row-level security would make it a scan).
CREATE OR REPLACE FUNCTION rag_model_migrated(model integer) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
    SELECT EXISTS (SELECT 1 FROM model_vectors WHERE model_id = model)
$$;
REVOKE ALL ON FUNCTION rag_model_migrated(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION rag_model_migrated(integer) TO rag_reader, rag_writer, rag_compliance;

-- ---------------------------------------------------------------- a vector index per dimension
-- As 009 for chunks: a partial HNSW index over embedding::vector(D) of the rows with D dimensions,
-- built for a migration's model before its switch (search's index strategy walks it).
CREATE OR REPLACE FUNCTION rag_ensure_model_vector_index(dims integer) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    index_name text := format('model_vectors_hnsw_%s', dims);
BEGIN
    IF dims IS NULL OR dims < 1 OR dims > 2000 THEN
        RETURN NULL;
    END IF;
    PERFORM pg_advisory_xact_lock(7300026);
    IF to_regclass(index_name) IS NULL THEN
        EXECUTE format('CREATE INDEX %I ON model_vectors USING hnsw ((embedding::vector(%s)) vector_cosine_ops)'
                       ' WHERE vector_dims(embedding) = %s', index_name, dims, dims);
    END IF;
    RETURN index_name;
END
$$;
REVOKE ALL ON FUNCTION rag_ensure_model_vector_index(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION rag_ensure_model_vector_index(integer) TO rag_writer;

-- ---------------------------------------------------------------- purge
-- A purged chunk (018) loses its text and vector; its vectors of other models go with it.
CREATE OR REPLACE FUNCTION rag_purge_model_vectors() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    DELETE FROM model_vectors WHERE chunk_id = NEW.id;
    RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS chunks_purge_model_vectors ON chunks;
CREATE TRIGGER chunks_purge_model_vectors AFTER UPDATE OF purged_at ON chunks
    FOR EACH ROW WHEN (NEW.purged_at IS NOT NULL) EXECUTE FUNCTION rag_purge_model_vectors();

-- ---------------------------------------------------------------- rights
-- The writer fills and prunes vectors and records migrations and switches (default privileges,
-- 006, give it the rest); switches are append-only for every role.
REVOKE UPDATE, DELETE, TRUNCATE ON model_switches FROM rag_writer;
GRANT SELECT, INSERT ON model_switches TO rag_writer;
-- The reader: the vectors of the chunks it may see (the rule of chunks' own policy, 018), how to load a
-- model, and the switches (an as-of search resolves its model from them).
ALTER TABLE model_vectors ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS writer_all ON model_vectors;
CREATE POLICY writer_all ON model_vectors TO rag_writer USING (true) WITH CHECK (true);
DROP POLICY IF EXISTS reader_groups ON model_vectors;
CREATE POLICY reader_groups ON model_vectors FOR SELECT TO rag_reader
    USING (EXISTS (SELECT 1 FROM chunks c JOIN document_versions v ON v.id = c.version_id
                   WHERE c.id = model_vectors.chunk_id
                   AND v.acl_groups && (SELECT rag_session_groups())
                   AND (v.status = 'live'
                        OR (v.status = 'superseded' AND rag_readable_now(v.document_id, (SELECT rag_session_groups()))))));
GRANT SELECT ON model_vectors, model_sources, model_switches TO rag_reader;
