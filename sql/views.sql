-- Compliance views, recreated after every migration (CREATE OR REPLACE keeps them idempotent).

-- Every version of every document with its validity window and who could see it.
CREATE OR REPLACE VIEW document_history AS
SELECT d.source, d.uri, v.version_no, v.kind, v.status, v.checksum, v.acl_groups,
       v.valid_from, v.valid_to, v.run_id, v.parser_version, v.chunker_version,
       m.name AS model_name, m.revision AS model_revision, v.blob_sha256, v.id AS version_id
FROM document_versions v
JOIN documents d ON d.id = v.document_id
LEFT JOIN embedding_models m ON m.id = v.model_id;

-- What is live now. For "as of T" use document_history with valid_from <= T < valid_to.
CREATE OR REPLACE VIEW live_documents AS
SELECT * FROM document_history WHERE status = 'live';

-- Chunks with their version's validity, for "which chunks were live on 3 April" queries.
CREATE OR REPLACE VIEW chunk_history AS
SELECT h.source, h.uri, h.version_no, h.acl_groups, h.valid_from, h.valid_to, h.status,
       c.id AS chunk_id, c.ord, c.section_path, c.page_start, c.page_end,
       c.char_start, c.char_end, c.token_count, c.text
FROM chunks c
JOIN document_history h ON h.version_id = c.version_id;
