-- 017 (issue 22, item 4): no role can forge history or the search log.
--
-- Migration 006 made history append-only: no role may change or remove what was written. This
-- one makes what may be written in the first place follow the rules the pipeline and the search
-- follow, checked by the database itself, so a role acting over raw SQL cannot write what the
-- library never would:
--
--  * The search log. A row's `db_user` (the login: session_user, as 006 defined it) and
--    `searched_at` (the transaction's now()) are filled by the server and whatever the client gave
--    is overwritten; its id must be the one this session last drew from the log's sequence (as
--    store.search_prepare does), so no one can take an id a later search will draw; and
--    `results`, `candidates`, `strategy`, `groups`, `query` and `k` must have the shape
--    retrieval/search.py writes (Hit.to_dict(with_text=False)) and the compliance views and
--    `explain` read. A malformed row is refused with the reason (check_violation).
--  * The lifecycle of versions (staged -> live). A version is inserted only as `staged`, with no
--    validity window, by a run that is still running; chunks go only into a staged content
--    version of a running run, with that version's model (so a published version's chunks are
--    fixed); a version is published only while its run is running; a validity bound is only ever
--    set to the transaction's now() (no back-dated window). Refused with restrict_violation.
--  * Two versions valid at once. Already one `live` version per document (001's unique index
--    document_versions_one_live); now also one open validity window per document (a live version
--    or a tombstone not yet closed), and each status's window must match it (a CHECK): a
--    constraint for every role, superuser included.
--
-- The first two apply to every role that is not a superuser (rag_writer, rag_reader, and a
-- deployment's own narrower login). A superuser (the migrations, the tests that fake old states,
-- the benchmarks that load an index directly: bench/bench_search_scale.py, bench_reader_cost.py)
-- may still give db_user / searched_at and insert published versions; the search log's shape is
-- checked for every role all the same. `explain` of a row written before this migration, or with
-- triggers off, reports it as malformed (rag_search_log_problem) instead of failing on it.
-- Every statement is idempotent.

-- Whether the role acting now (current_user: a SET ROLE applies) is a superuser.
CREATE OR REPLACE FUNCTION rag_acting_as_superuser() RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT coalesce((SELECT rolsuper FROM pg_roles WHERE rolname = current_user), false)
$$;

-- ---------------------------------------------------------------- the search log's shape
-- A JSON number that is a whole number in [low, high], written as one (5, not 5.0: the views cast
-- its text to bigint).
CREATE OR REPLACE FUNCTION rag_json_whole(value jsonb, low numeric, high numeric) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(jsonb_typeof(value) = 'number' AND value::text ~ '^-?[0-9]{1,19}$'
                    AND value::text::numeric BETWEEN low AND high, false)
$$;

-- A JSON number a double precision holds (the views cast scores to it).
CREATE OR REPLACE FUNCTION rag_json_real(value jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(jsonb_typeof(value) = 'number' AND abs(value::text::numeric) <= 1e300, false)
$$;

-- What is wrong with one logged hit, or NULL: the keys and types Hit.to_dict(with_text=False)
-- writes (retrieval/search.py), no other key (`text` included: the log keeps its SHA-256 only).
-- Every test is a simple expression (jsonpath, no subquery), evaluated in order, so a search pays
-- some microseconds per hit; a query runs only to name what is wrong.
CREATE OR REPLACE FUNCTION rag_search_hit_problem(hit jsonb) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    known CONSTANT text[] := ARRAY['uri', 'source', 'version', 'section_path', 'pages', 'chunk_id', 'score',
                                   'similarity', 'branches', 'text_sha256', 'features'];
    required CONSTANT text[] := ARRAY['uri', 'source', 'version', 'section_path', 'pages', 'chunk_id', 'score',
                                      'similarity', 'branches', 'text_sha256'];
    name text;
BEGIN
    IF jsonb_typeof(hit) IS DISTINCT FROM 'object' THEN
        RETURN format('is a JSON %s, not an object', coalesce(jsonb_typeof(hit), 'nothing'));
    END IF;
    IF hit - known <> '{}'::jsonb THEN
        SELECT k INTO name FROM jsonb_object_keys(hit - known) AS k ORDER BY k LIMIT 1;
        RETURN format('has the unknown key %s', left(quote_literal(name), 60));
    END IF;
    IF NOT hit ?& required THEN
        SELECT k INTO name FROM unnest(required) AS k WHERE NOT hit ? k LIMIT 1;
        RETURN format('has no %s', name);
    END IF;
    IF NOT rag_json_whole(hit -> 'chunk_id', 1, 9223372036854775807) THEN
        RETURN 'chunk_id is not a positive whole number';
    END IF;
    IF NOT rag_json_whole(hit -> 'version', 1, 2147483647) THEN
        RETURN 'version is not a positive whole number';
    END IF;
    IF jsonb_typeof(hit -> 'uri') <> 'string' OR jsonb_typeof(hit -> 'source') <> 'string' THEN
        RETURN 'uri and source must be strings';
    END IF;
    IF NOT rag_json_real(hit -> 'score') OR NOT rag_json_real(hit -> 'similarity') THEN
        RETURN 'score and similarity must be numbers';
    END IF;
    IF jsonb_typeof(hit -> 'text_sha256') <> 'string' OR (hit ->> 'text_sha256') !~ '^[0-9a-f]{64}$' THEN
        RETURN 'text_sha256 is not a SHA-256 in lowercase hex';
    END IF;
    IF jsonb_typeof(hit -> 'section_path') <> 'array'
       OR jsonb_path_exists(hit -> 'section_path', 'lax $[*] ? (@.type() != "string")', '{}', true) THEN
        RETURN 'section_path is not an array of strings';
    END IF;
    IF jsonb_typeof(hit -> 'pages') <> 'array' OR jsonb_path_query_first(hit -> 'pages', 'lax $.size()', '{}', true) <> '2'
       OR jsonb_path_exists(hit -> 'pages', 'lax $[*] ? (@.type() != "null"'
                            ' && !(@.type() == "number" && @ == @.floor() && @ >= 0 && @ <= 2147483647))', '{}', true) THEN
        RETURN 'pages is not [first, last] (whole numbers or null)';
    END IF;
    IF jsonb_typeof(hit -> 'branches') <> 'object' THEN
        RETURN 'branches is not an object';
    END IF;
    IF (hit -> 'branches') - ARRAY['vector', 'fulltext', 'rerank'] <> '{}'::jsonb THEN
        SELECT k INTO name FROM jsonb_object_keys((hit -> 'branches') - ARRAY['vector', 'fulltext', 'rerank']) AS k
        ORDER BY k LIMIT 1;
        RETURN format('branches has the unknown branch %s', left(quote_literal(name), 60));
    END IF;
    IF jsonb_path_exists(hit -> 'branches', 'lax $.* ? (@.type() != "object")', '{}', true) THEN
        SELECT key INTO name FROM jsonb_each(hit -> 'branches') WHERE jsonb_typeof(value) <> 'object' ORDER BY key LIMIT 1;
        RETURN format('branch %s is not an object', name);
    END IF;
    IF jsonb_path_exists(hit -> 'branches', 'lax $.*.keyvalue() ? (@.key != "rank" && @.key != "score")', '{}', true)
       OR jsonb_path_exists(hit -> 'branches', 'lax $.*.rank ? (@.type() != "null"'
                            ' && !(@.type() == "number" && @ == @.floor() && @ >= 1 && @ <= 2147483647))', '{}', true)
       OR jsonb_path_exists(hit -> 'branches', 'lax $.*.score ? (@.type() != "null"'
                            ' && !(@.type() == "number" && @ >= -1e300 && @ <= 1e300))', '{}', true) THEN
        SELECT string_agg(key, ', ' ORDER BY key) INTO name FROM jsonb_each(hit -> 'branches');
        RETURN format('branch %s is not {"rank": whole number or null, "score": number or null}', name);
    END IF;
    IF hit ? 'features' AND (jsonb_typeof(hit -> 'features') <> 'object'
       OR jsonb_path_exists(hit -> 'features', 'lax $.* ? (!(@.type() == "number" && @ >= -1e300 && @ <= 1e300))', '{}', true)) THEN
        RETURN 'features is not an object of numbers';
    END IF;
    RETURN NULL;
END $$;

-- What is wrong with a list of logged hits (`results` or `candidates`), or NULL.
CREATE OR REPLACE FUNCTION rag_search_hits_problem(hits jsonb, label text, most integer) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    problem text;
BEGIN
    IF jsonb_typeof(hits) IS DISTINCT FROM 'array' THEN
        RETURN format('%s is a JSON %s, not an array', label, coalesce(jsonb_typeof(hits), 'nothing'));
    END IF;
    IF jsonb_array_length(hits) > most THEN
        RETURN format('%s holds %s entries; at most %s here', label, jsonb_array_length(hits), most);
    END IF;
    SELECT format('%s entry %s %s', label, n, rag_search_hit_problem(h)) INTO problem
    FROM jsonb_array_elements(hits) WITH ORDINALITY AS e(h, n)
    WHERE rag_search_hit_problem(h) IS NOT NULL ORDER BY n LIMIT 1;
    RETURN problem;
END $$;

-- What is wrong with a search log row, or NULL: what the trigger below refuses and what `explain`
-- reports as malformed. The limits are those of retrieval/search.py's check_request (query,
-- groups, caller) and of what a search returns (at most k results, at most 10 runners-up; 10,000
-- and 1,000 here, whatever k says).
CREATE OR REPLACE FUNCTION rag_search_log_problem(l search_log) RETURNS text LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF l.k < 0 THEN
        RETURN format('k is %s', l.k);
    END IF;
    IF char_length(l.query) > 2000 THEN
        RETURN 'the query is longer than 2,000 characters';
    END IF;
    IF char_length(l.caller) > 256 THEN
        RETURN 'the caller is longer than 256 characters';
    END IF;
    IF cardinality(l.groups) > 256 OR EXISTS (SELECT 1 FROM unnest(l.groups) g
                                              WHERE g IS NULL OR char_length(g) > 200 OR position(',' IN g) > 0) THEN
        RETURN 'groups is not a list of at most 256 group names (no NULL, no '','', at most 200 characters each)';
    END IF;
    IF jsonb_typeof(l.results) = 'array' THEN
        IF jsonb_array_length(l.results) > l.k THEN
            RETURN format('results holds %s entries for k %s', jsonb_array_length(l.results), l.k);
        END IF;
    END IF;
    IF l.strategy IS NOT NULL AND (jsonb_typeof(l.strategy) <> 'object'
       OR (l.strategy ? 'fulltext' AND jsonb_typeof(l.strategy -> 'fulltext') <> 'object')) THEN
        RETURN 'strategy is not an object (with an object under "fulltext", if any)';
    END IF;
    RETURN coalesce(rag_search_hits_problem(l.results, 'results', 10000),
                    rag_search_hits_problem(l.candidates, 'candidates', 1000));
END $$;

CREATE OR REPLACE FUNCTION rag_search_log_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    drawn bigint;
    problem text;
BEGIN
    IF NOT rag_acting_as_superuser() THEN
        NEW.db_user := session_user;  -- the login, whatever the client gave
        NEW.searched_at := now();     -- the transaction's time, as store.search_prepare reads it
        BEGIN
            drawn := currval(pg_get_serial_sequence('search_log', 'id'));
        EXCEPTION WHEN object_not_in_prerequisite_state THEN
            drawn := NULL;  -- this session drew no id
        END;
        IF NEW.id IS DISTINCT FROM drawn THEN
            RAISE EXCEPTION 'INSERT into search_log: id % is not the id this session last drew from the log''s sequence', NEW.id
                USING ERRCODE = 'check_violation',
                      HINT = 'leave id to its default, or give the nextval() this session just drew';
        END IF;
    END IF;
    problem := rag_search_log_problem(NEW);
    IF problem IS NOT NULL THEN
        RAISE EXCEPTION 'INSERT into search_log refused: %', problem
            USING ERRCODE = 'check_violation',
                  HINT = 'search_log rows are written by retrieval.search (Hit.to_dict(with_text=False)); see the compliance section of README.md';
    END IF;
    RETURN NEW;
END $$;

DROP TRIGGER IF EXISTS search_log_well_formed ON search_log;
CREATE TRIGGER search_log_well_formed BEFORE INSERT ON search_log
    FOR EACH ROW EXECUTE FUNCTION rag_search_log_insert();

-- ---------------------------------------------------------------- the staged -> live lifecycle
CREATE OR REPLACE FUNCTION rag_run_status(run text) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT status FROM runs WHERE run_id = run
$$;

CREATE OR REPLACE FUNCTION rag_guard_version_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    run_status text;
BEGIN
    IF rag_acting_as_superuser() THEN
        RETURN NEW;
    END IF;
    IF NEW.status IS DISTINCT FROM 'staged' OR NEW.valid_from IS NOT NULL OR NEW.valid_to IS NOT NULL THEN
        RAISE EXCEPTION 'INSERT of a document version with status % and validity [%, %): versions are written staged, without a validity window; publishing makes them live',
            NEW.status, NEW.valid_from, NEW.valid_to
            USING ERRCODE = 'restrict_violation', HINT = 'see store.versions (stage_*, publish)';
    END IF;
    run_status := rag_run_status(NEW.run_id);
    IF run_status IS DISTINCT FROM 'running' THEN
        RAISE EXCEPTION 'INSERT of a document version for run %: that run is %, not running', NEW.run_id, coalesce(run_status, 'unknown')
            USING ERRCODE = 'restrict_violation';
    END IF;
    NEW.created_at := now();
    RETURN NEW;
END $$;

DROP TRIGGER IF EXISTS document_versions_staged_only ON document_versions;
CREATE TRIGGER document_versions_staged_only BEFORE INSERT ON document_versions
    FOR EACH ROW EXECUTE FUNCTION rag_guard_version_insert();

-- Publishing, as roles other than a superuser: only while the version's run is running, and a
-- validity bound is the transaction's now() (what store.versions.publish sets), never another time.
CREATE OR REPLACE FUNCTION rag_guard_version_publish() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    run_status text;
BEGIN
    IF rag_acting_as_superuser() THEN
        RETURN NEW;
    END IF;
    IF (NEW.valid_from IS DISTINCT FROM OLD.valid_from AND NEW.valid_from IS DISTINCT FROM now())
       OR (NEW.valid_to IS DISTINCT FROM OLD.valid_to AND NEW.valid_to IS DISTINCT FROM now()) THEN
        RAISE EXCEPTION 'UPDATE of document version %: a validity bound is set to the time of the publishing transaction (now()), not %',
            OLD.id, CASE WHEN NEW.valid_from IS DISTINCT FROM OLD.valid_from THEN NEW.valid_from ELSE NEW.valid_to END
            USING ERRCODE = 'restrict_violation';
    END IF;
    IF OLD.status = 'staged' AND NEW.status IN ('live', 'tombstoned') THEN
        run_status := rag_run_status(OLD.run_id);
        IF run_status IS DISTINCT FROM 'running' THEN
            RAISE EXCEPTION 'UPDATE of document version %: its run % is %, not running; only a running run publishes',
                OLD.id, OLD.run_id, coalesce(run_status, 'unknown')
                USING ERRCODE = 'restrict_violation';
        END IF;
    END IF;
    RETURN NEW;
END $$;

DROP TRIGGER IF EXISTS document_versions_publish_now ON document_versions;
CREATE TRIGGER document_versions_publish_now BEFORE UPDATE ON document_versions
    FOR EACH ROW EXECUTE FUNCTION rag_guard_version_publish();

-- Chunks, as roles other than a superuser: only into a staged content version of a running run,
-- with that version's model. Once per statement (the chunks of a version are one INSERT .. SELECT).
CREATE OR REPLACE FUNCTION rag_guard_chunk_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    bad record;
BEGIN
    IF rag_acting_as_superuser() THEN
        RETURN NULL;
    END IF;
    SELECT n.version_id, v.status, v.kind, r.status AS run_status, n.model_id, v.model_id AS version_model INTO bad
    FROM rag_new_chunks n
    LEFT JOIN document_versions v ON v.id = n.version_id
    LEFT JOIN runs r ON r.run_id = v.run_id
    WHERE v.status IS DISTINCT FROM 'staged' OR v.kind IS DISTINCT FROM 'content'
       OR r.status IS DISTINCT FROM 'running' OR n.model_id IS DISTINCT FROM v.model_id
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'INSERT of chunks into document version % (% %, run %, model % for the version''s %): chunks go only into a staged content version of a running run, with its model',
            bad.version_id, coalesce(bad.status, 'unknown'), coalesce(bad.kind, ''), coalesce(bad.run_status, 'unknown'),
            bad.model_id, bad.version_model
            USING ERRCODE = 'restrict_violation', HINT = 'a published version''s chunks are fixed; stage a new version';
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS chunks_into_staged_only ON chunks;
CREATE TRIGGER chunks_into_staged_only AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS rag_new_chunks
    FOR EACH STATEMENT EXECUTE FUNCTION rag_guard_chunk_insert();

-- ---------------------------------------------------------------- never two versions valid at once
-- Each status's validity window, for every role from now on (NOT VALID: rows already written are
-- history and stay as they are; every new or updated row must hold it).
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'document_versions_window_of_status'
                   AND conrelid = 'document_versions'::regclass) THEN
        ALTER TABLE document_versions ADD CONSTRAINT document_versions_window_of_status CHECK (
            CASE status
                WHEN 'staged' THEN valid_from IS NULL AND valid_to IS NULL
                WHEN 'discarded' THEN valid_from IS NULL AND valid_to IS NULL
                WHEN 'live' THEN valid_from IS NOT NULL AND valid_to IS NULL AND kind = 'content'
                WHEN 'superseded' THEN valid_from IS NOT NULL AND valid_to IS NOT NULL AND kind = 'content'
                WHEN 'tombstoned' THEN valid_from IS NOT NULL AND kind = 'tombstone'
            END
        ) NOT VALID;
    END IF;
END $$;

-- One open validity window per document: a live version, or a tombstone no new version closed.
-- (One live version per document is 001's document_versions_one_live.) publish closes what it
-- replaces before it opens anything, statement by statement, so this holds inside its transaction.
DO $$
DECLARE
    clash text;
BEGIN
    SELECT string_agg(format('%s %s', d.source, d.uri), ', ') INTO clash
    FROM (SELECT document_id FROM document_versions WHERE valid_from IS NOT NULL AND valid_to IS NULL
          GROUP BY document_id HAVING count(*) > 1 LIMIT 10) o
    JOIN documents d ON d.id = o.document_id;
    IF clash IS NOT NULL THEN
        RAISE EXCEPTION 'migration 017: documents with more than one open validity window (live or tombstoned, valid_to NULL): %', clash
            USING HINT = 'close all but the newest (valid_to = the next one''s valid_from) as a superuser, then migrate again';
    END IF;
END $$;
CREATE UNIQUE INDEX IF NOT EXISTS document_versions_one_valid
    ON document_versions (document_id) WHERE valid_from IS NOT NULL AND valid_to IS NULL;
