-- Compliance views, recreated after every migration (CREATE OR REPLACE keeps them idempotent;
-- new columns go at the end). They run with their owner's rights: rag_compliance reads them
-- without any right on the tables below, and readers (rag_reader) get no right on them at all,
-- so row-level security cannot be side-stepped through a view.

-- Every version of every document with its validity window and who could see it. Discarded
-- staging attempts are not versions and are left out. `change` says what a version changed:
-- 'content' (text, parser, cleaner, chunker or model), 'access' (only its ACL groups),
-- 'rechunk' (the same text cut smaller for a model migration's new model: a run named
-- rechunk-<migration>-..., migration/rechunk.py) or 'tombstone' (the source object was gone).
CREATE OR REPLACE VIEW document_history AS
SELECT d.source, d.uri, v.version_no, v.kind, v.status, v.checksum, v.acl_groups,
       v.valid_from, v.valid_to, v.run_id, v.parser_version, v.chunker_version,
       m.name AS model_name, m.revision AS model_revision, v.blob_sha256, v.id AS version_id,
       CASE
           WHEN v.kind = 'tombstone' THEN 'tombstone'
           WHEN v.kind <> 'content' THEN v.kind
           WHEN v.run_id LIKE 'rechunk-%' AND p.checksum IS NOT DISTINCT FROM v.checksum THEN 'rechunk'
           WHEN p.kind = 'content'
                AND p.checksum IS NOT DISTINCT FROM v.checksum
                AND p.parser_version IS NOT DISTINCT FROM v.parser_version
                AND p.cleaner_version IS NOT DISTINCT FROM v.cleaner_version
                AND p.chunker_version IS NOT DISTINCT FROM v.chunker_version
                AND p.model_id IS NOT DISTINCT FROM v.model_id
                AND NOT (p.acl_groups @> v.acl_groups AND v.acl_groups @> p.acl_groups) THEN 'access'
           ELSE 'content'
       END AS change,
       p.acl_groups AS previous_acl_groups, p.checksum AS previous_checksum, v.created_at,
       -- when the version's text was purged (migration 018; purge_record says why), else NULL: its
       -- chunks are purged together (an access-only copy of a purged version is born purged)
       (SELECT c.purged_at FROM chunks c WHERE c.version_id = v.id ORDER BY c.ord LIMIT 1) AS purged_at
FROM document_versions v
JOIN documents d ON d.id = v.document_id
LEFT JOIN embedding_models m ON m.id = v.model_id
LEFT JOIN LATERAL (
    SELECT pv.kind, pv.checksum, pv.parser_version, pv.cleaner_version, pv.chunker_version,
           pv.model_id, pv.acl_groups
    FROM document_versions pv
    WHERE pv.document_id = v.document_id AND pv.version_no < v.version_no AND pv.status <> 'discarded'
    ORDER BY pv.version_no DESC LIMIT 1
) p ON true
WHERE v.status <> 'discarded';

-- What is live now. For "as of T" use document_history with valid_from <= T < valid_to.
CREATE OR REPLACE VIEW live_documents AS
SELECT * FROM document_history WHERE status = 'live';

-- Chunks with their version's validity, for "which chunks were live on 3 April" queries, and the
-- SHA-256 of each chunk's text (what search_log records for every returned chunk).
CREATE OR REPLACE VIEW chunk_history AS
SELECT h.source, h.uri, h.version_no, h.acl_groups, h.valid_from, h.valid_to, h.status,
       c.id AS chunk_id, c.ord, c.section_path, c.page_start, c.page_end,
       c.char_start, c.char_end, c.token_count, c.text,
       encode(sha256(convert_to(c.text, 'UTF8')), 'hex') AS text_sha256, h.change,
       c.purged_at  -- set: the text was purged (migration 018); text_sha256 is then that of ''
FROM chunks c
JOIN document_history h ON h.version_id = c.version_id;

-- Which runs changed which document, when and why (the kind of change, and what it replaced).
CREATE OR REPLACE VIEW document_changes AS
SELECT h.source, h.uri, h.version_no, h.change, h.status, h.run_id, r.status AS run_status,
       r.started_at AS run_started_at, r.finished_at AS run_finished_at, r.gate_passed,
       h.valid_from, h.valid_to, h.previous_checksum, h.checksum,
       h.previous_acl_groups, h.acl_groups, h.model_name, h.parser_version, h.chunker_version
FROM document_history h
JOIN runs r ON r.run_id = h.run_id;

-- What each logged search returned, one row per returned chunk in rank order, with the text as
-- the index holds it and whether it still hashes to what the search showed.
CREATE OR REPLACE VIEW search_results AS
SELECT l.id AS search_id, l.searched_at, l.caller, l.db_user, l.query, l.groups, l.as_of, l.k,
       r.rank, (r.hit ->> 'chunk_id')::bigint AS chunk_id, c.source, c.uri, c.version_no,
       c.section_path, c.text, r.hit ->> 'text_sha256' AS logged_text_sha256,
       c.text_sha256, c.text_sha256 = (r.hit ->> 'text_sha256') AS text_unchanged,
       (r.hit ->> 'score')::double precision AS score, r.hit -> 'branches' AS branches,
       c.purged_at  -- set: the returned text was purged since (text_unchanged is then false)
FROM search_log l
CROSS JOIN LATERAL jsonb_array_elements(l.results) WITH ORDINALITY AS r(hit, rank)
LEFT JOIN chunk_history c ON c.chunk_id = (r.hit ->> 'chunk_id')::bigint;

-- Every verified answer (migration 016) with the search it was generated from: who asked what,
-- with which groups, as of when, and the verdict the citations earned.
CREATE OR REPLACE VIEW answer_record AS
SELECT a.id AS answer_id, a.search_id, a.verified_at, a.judged_as_of, a.caller, a.db_user, a.verdict,
       a.message, l.query, l.groups, l.as_of AS search_as_of, l.searched_at, a.draft, a.claims,
       m.name AS model_name, m.revision AS model_revision, a.support_threshold,
       a.support_coverage_weight, a.support_source, a.support_polarity_weight,  -- 021; NULL before it
       a.support_crosslingual_threshold,  -- 031; NULL before it
       a.needs_review  -- 032
FROM answers a
JOIN search_log l ON l.id = a.search_id
LEFT JOIN embedding_models m ON m.id = a.model_id;

-- Which claims of which answers cited which document version: one row per citation, with the
-- document and version the cited chunk belongs to (whatever its status: a fabricated id has no
-- document, a chunk the caller could not see has one).
CREATE OR REPLACE VIEW answer_citations AS
SELECT a.id AS answer_id, a.search_id, a.verified_at, a.caller, a.verdict,
       cl.ord AS claim_no, cl.claim ->> 'text' AS claim, cl.claim ->> 'status' AS claim_status,
       ci.ord AS citation_no, (ci.cit ->> 'chunk_id')::bigint AS chunk_id,
       c.source, c.uri, c.version_no, c.section_path, c.page_start, c.page_end,
       ci.cit ->> 'status' AS citation_status, ci.cit ->> 'reason' AS reason, ci.cit ->> 'quote' AS quote
FROM answers a
CROSS JOIN LATERAL jsonb_array_elements(a.claims) WITH ORDINALITY AS cl(claim, ord)
CROSS JOIN LATERAL jsonb_array_elements(cl.claim -> 'citations') WITH ORDINALITY AS ci(cit, ord)
LEFT JOIN chunk_history c ON c.chunk_id = (ci.cit ->> 'chunk_id')::bigint;

-- Every purge (migration 018): which version lost its text and vectors, when, why, by whom (as
-- the operator gave it, and the database login), how many chunks and what became of the stored
-- source bytes. The version's metadata and hashes stay in document_history.
CREATE OR REPLACE VIEW purge_record AS
SELECT d.source, d.uri, v.version_no, v.status, v.checksum, v.blob_sha256, p.purged_at, p.reason,
       p.purged_by, p.db_user, p.chunks, p.blob, v.id AS version_id
FROM purges p
JOIN document_versions v ON v.id = p.version_id
JOIN documents d ON d.id = v.document_id;

-- Rights on the views: compliance reads every one; nobody else is given any (views created later
-- would otherwise inherit the writer's default table privileges, and writing through an
-- updatable view would run with the owner's rights).
DO $$
DECLARE
    v text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'rag_compliance') THEN
        RETURN;  -- a schema before migration 006
    END IF;
    FOR v IN SELECT viewname FROM pg_views WHERE schemaname = current_schema() LOOP
        EXECUTE format('REVOKE ALL ON %I FROM PUBLIC, rag_reader, rag_writer', v);
        EXECUTE format('GRANT SELECT ON %I TO rag_compliance', v);
    END LOOP;
END $$;
