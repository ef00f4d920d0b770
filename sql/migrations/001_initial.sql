-- 001: the versioned, access-controlled index.
-- Content rows (versions, chunks) are immutable once written; publishing only changes a
-- version's status and closes its validity window.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE embedding_models (
    id              serial PRIMARY KEY,
    name            text NOT NULL,
    revision        text NOT NULL,
    weights_sha256  text NOT NULL,
    dimension       integer NOT NULL CHECK (dimension > 0),
    normalized      boolean NOT NULL,
    max_tokens      integer NOT NULL CHECK (max_tokens > 0),
    registered_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (name, revision, weights_sha256)
);

CREATE TABLE runs (
    run_id          text PRIMARY KEY,
    sources         text[] NOT NULL,
    status          text NOT NULL DEFAULT 'running'
                    CHECK (status IN ('running', 'published', 'gate_failed', 'failed', 'nothing_to_do')),
    started_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    model_id        integer REFERENCES embedding_models(id),
    counts          jsonb NOT NULL DEFAULT '{}'::jsonb,
    gate_passed     boolean,
    gate_metrics    jsonb,
    gate_reason     text,
    error           text
);

CREATE TABLE documents (
    id              bigserial PRIMARY KEY,
    source          text NOT NULL,
    uri             text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (source, uri)
);

CREATE TABLE document_versions (
    id                bigserial PRIMARY KEY,
    document_id       bigint NOT NULL REFERENCES documents(id),
    version_no        integer NOT NULL,
    kind              text NOT NULL CHECK (kind IN ('content', 'tombstone')),
    status            text NOT NULL CHECK (status IN ('staged', 'live', 'superseded', 'tombstoned', 'discarded')),
    checksum          text,
    blob_sha256       text,
    size_bytes        bigint,
    media_type        text,
    acl_groups        text[] NOT NULL DEFAULT '{}',
    parser_version    text,
    cleaner_version   text,
    chunker_version   text,
    model_id          integer REFERENCES embedding_models(id),
    run_id            text NOT NULL REFERENCES runs(run_id),
    cleaning_counts   jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at        timestamptz NOT NULL DEFAULT now(),
    valid_from        timestamptz,
    valid_to          timestamptz,
    UNIQUE (document_id, version_no),
    CHECK (valid_to IS NULL OR valid_from IS NOT NULL AND valid_to >= valid_from)
);
-- At most one live version and one staged version per document.
CREATE UNIQUE INDEX document_versions_one_live ON document_versions (document_id) WHERE status = 'live';
CREATE UNIQUE INDEX document_versions_one_staged ON document_versions (document_id) WHERE status = 'staged';
CREATE INDEX document_versions_run ON document_versions (run_id);
CREATE INDEX document_versions_validity ON document_versions (valid_from, valid_to);

CREATE TABLE chunks (
    id              bigserial PRIMARY KEY,
    version_id      bigint NOT NULL REFERENCES document_versions(id),
    ord             integer NOT NULL,
    section_path    text[] NOT NULL DEFAULT '{}',
    page_start      integer,
    page_end        integer,
    char_start      integer NOT NULL,
    char_end        integer NOT NULL,
    token_count     integer NOT NULL,
    content_hash    text NOT NULL,
    text            text NOT NULL,
    model_id        integer NOT NULL REFERENCES embedding_models(id),
    embedding       vector NOT NULL,
    tsv             tsvector NOT NULL,
    UNIQUE (version_id, ord)
);
CREATE INDEX chunks_reuse ON chunks (content_hash, model_id);
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);

-- Work items of a run: the hand-over between pipeline steps, which may run in different
-- processes or machines. Rows are per (run, document) and are deleted when the run ends.
CREATE TABLE run_items (
    run_id          text NOT NULL REFERENCES runs(run_id),
    source          text NOT NULL,
    uri             text NOT NULL,
    action          text NOT NULL CHECK (action IN ('new', 'changed', 'acl_changed', 'reparse', 'gone')),
    checksum        text,
    blob_sha256     text,
    size_bytes      bigint,
    acl_groups      text[] NOT NULL DEFAULT '{}',
    stage           text NOT NULL DEFAULT 'planned',
    parsed          jsonb,
    cleaned         jsonb,
    chunks          jsonb,
    embeddings      bytea,
    error           text,
    PRIMARY KEY (run_id, source, uri)
);

CREATE TABLE quarantine (
    id              bigserial PRIMARY KEY,
    run_id          text NOT NULL REFERENCES runs(run_id),
    source          text NOT NULL,
    uri             text NOT NULL,
    checksum        text,
    stage           text NOT NULL,
    error           text NOT NULL,
    quarantined_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX quarantine_doc ON quarantine (source, uri, quarantined_at DESC);

-- Every search, so a past result can be explained and replayed.
CREATE TABLE search_log (
    id              bigserial PRIMARY KEY,
    searched_at     timestamptz NOT NULL DEFAULT now(),
    query           text NOT NULL,
    groups          text[] NOT NULL,
    as_of           timestamptz,
    model_id        integer REFERENCES embedding_models(id),
    k               integer NOT NULL,
    results         jsonb NOT NULL
);
