-- 016 (issue 24): the answer record. Every `verify` of a generated answer is appended here,
-- linked to the search log row of the search the answer was generated from: the draft as given,
-- the citation map (claim -> chunk ids with version, URI, section path, pages), each check's
-- status and reason, the verdict, who asked (caller as given, database user as logged in), when,
-- as of when it was judged, and the model and support calibration used. Append-only like the
-- search log (grants first, triggers second); rag_reader may insert (a RAG service records its
-- own verifications) and read back nothing but the id; rag_compliance reads it through the
-- views of sql/views.sql (answer_record, answer_citations).
-- Also: support thresholds calibrated from labelled answers, kept with the index per model
-- (what refusal_calibrations is for the refusal score).
-- Every statement is idempotent.

CREATE TABLE IF NOT EXISTS support_calibrations (
    id                    bigserial PRIMARY KEY,
    model_id              integer NOT NULL REFERENCES embedding_models(id),
    threshold             double precision NOT NULL,
    coverage_weight       double precision NOT NULL,
    eval_set              text NOT NULL,
    eval_set_sha256       text NOT NULL,
    supported             integer NOT NULL,   -- calibration citations that support their claim
    unsupported           integer NOT NULL,   -- and those that do not (their exact fields all present)
    supported_accuracy    double precision NOT NULL,  -- on the held-out split
    unsupported_accuracy  double precision NOT NULL,
    calibrated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS support_calibrations_latest ON support_calibrations (model_id, calibrated_at DESC);

CREATE TABLE IF NOT EXISTS answers (
    id                       bigserial PRIMARY KEY,
    search_id                bigint NOT NULL,             -- search_log.id (checked by answers_search_exists)
    verified_at              timestamptz NOT NULL DEFAULT now(),
    judged_as_of             timestamptz NOT NULL,        -- the search's as_of, else the verification's time
    caller                   text,                        -- identity as the caller gave it
    db_user                  text NOT NULL DEFAULT session_user,  -- who logged in: not spoofable
    draft                    jsonb NOT NULL,              -- the answer as given: claims and citations
    claims                   jsonb NOT NULL,              -- per claim: status, reason, citations with checks
    verdict                  text NOT NULL CHECK (verdict IN ('verified', 'flagged', 'rejected')),
    message                  text,                        -- the refusal shown instead of a rejected answer
    model_id                 integer REFERENCES embedding_models(id),
    support_threshold        double precision NOT NULL,
    support_coverage_weight  double precision NOT NULL,
    support_source           text NOT NULL,               -- the calibration in words
    support_calibration_id   bigint REFERENCES support_calibrations(id)
);
CREATE INDEX IF NOT EXISTS answers_search ON answers (search_id);

-- The link to the search log is checked by a trigger rather than a foreign key: the log is
-- append-only, so a reference cannot dangle, and a key would make `TRUNCATE search_log` fail on
-- the key instead of on the log's own append-only trigger (the refusal an auditor should read).
CREATE OR REPLACE FUNCTION rag_answer_search_exists() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM search_log WHERE id = NEW.search_id) THEN
        RAISE EXCEPTION 'answer for search %: no such search in search_log', NEW.search_id
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS answers_search_exists ON answers;
CREATE TRIGGER answers_search_exists BEFORE INSERT ON answers
    FOR EACH ROW EXECUTE FUNCTION rag_answer_search_exists();

DROP TRIGGER IF EXISTS answers_append_only ON answers;
CREATE TRIGGER answers_append_only BEFORE UPDATE OR DELETE ON answers
    FOR EACH ROW EXECUTE FUNCTION rag_refuse_rewrite();
DROP TRIGGER IF EXISTS answers_no_truncate ON answers;
CREATE TRIGGER answers_no_truncate BEFORE TRUNCATE ON answers
    FOR EACH STATEMENT EXECUTE FUNCTION rag_refuse_rewrite();

-- The writer's default privileges (006) gave it everything on the new tables: the record is
-- append-only for it too.
REVOKE UPDATE, DELETE, TRUNCATE ON answers FROM rag_writer;
GRANT SELECT, INSERT ON answers TO rag_writer;
GRANT SELECT, INSERT, UPDATE, DELETE ON support_calibrations TO rag_writer;

-- The reader: insert only (and the new row's id back), and the threshold it is judged by.
REVOKE ALL ON answers FROM rag_reader;
GRANT INSERT ON answers TO rag_reader;
GRANT SELECT (id) ON answers TO rag_reader;
GRANT USAGE ON SEQUENCE answers_id_seq TO rag_reader;
GRANT SELECT ON support_calibrations TO rag_reader;
