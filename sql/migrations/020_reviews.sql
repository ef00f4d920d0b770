-- 020 (issue 25): human review of flagged and rejected answers.
--
--  * reviewers: who may sign in to the review screen, a password hash per reviewer (scrypt,
--    review/passwords.py; none when the reverse proxy authenticates them) and the access groups
--    whose documents they may read.
--  * review_decisions: every decision on an answer (approve, reject, correct with the corrected
--    draft and its verification), who made it and why. Append-only like the answer record: a
--    decision is a new row; the latest one per answer is in force.
--  * review_views: every page view of an answer by a reviewer (append-only).
--  * review_queue, review_keys, review_answer_versions: derived from `answers` and
--    `review_decisions` by the triggers below, never written by a role: each answer's state
--    (open, verified, or its latest decision), the sources and documents it cites (the queue's
--    filters, each an index in newest-first order, so a page of a queue of 100,000 answers is an
--    index scan), and the access groups of every document version it cites or its search returned
--    (a reviewer sees an answer only when their groups may read all of them).
-- Every statement is idempotent.

CREATE TABLE IF NOT EXISTS reviewers (
    name           text PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 200),
    password_hash  text,                               -- NULL: signs in through the reverse proxy only
    groups         text[] NOT NULL DEFAULT '{}',
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS review_decisions (
    id                 bigserial PRIMARY KEY,
    answer_id          bigint NOT NULL REFERENCES answers(id),
    decision           text NOT NULL CHECK (decision IN ('approve', 'reject', 'correct')),
    reviewer           text NOT NULL,
    comment            text,
    corrected          jsonb,       -- correct: the reviewer's draft (claims and citations, as `verify` takes it)
    corrected_claims   jsonb,       -- correct: its citations verified again (claims with checks)
    corrected_verdict  text CHECK (corrected_verdict IN ('verified', 'flagged', 'rejected')),
    decided_at         timestamptz NOT NULL DEFAULT now(),
    db_user            text NOT NULL DEFAULT session_user,
    CHECK ((decision = 'correct') = (corrected IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS review_decisions_answer ON review_decisions (answer_id, id DESC);

CREATE TABLE IF NOT EXISTS review_views (
    id         bigserial PRIMARY KEY,
    reviewer   text NOT NULL,
    answer_id  bigint NOT NULL REFERENCES answers(id),
    viewed_at  timestamptz NOT NULL DEFAULT now(),
    db_user    text NOT NULL DEFAULT session_user
);
CREATE INDEX IF NOT EXISTS review_views_answer ON review_views (answer_id, viewed_at DESC);

CREATE TABLE IF NOT EXISTS review_queue (
    answer_id    bigint PRIMARY KEY REFERENCES answers(id),
    verified_at  timestamptz NOT NULL,
    verdict      text NOT NULL,
    state        text NOT NULL CHECK (state IN ('open', 'verified', 'approve', 'reject', 'correct')),
    decision_id  bigint,
    decided_at   timestamptz
);
CREATE INDEX IF NOT EXISTS review_queue_state ON review_queue (state, verified_at DESC, answer_id DESC);
CREATE INDEX IF NOT EXISTS review_queue_verdict ON review_queue (verdict, state, verified_at DESC, answer_id DESC);
CREATE INDEX IF NOT EXISTS review_queue_newest ON review_queue (verified_at DESC, answer_id DESC);  -- status "all"

CREATE TABLE IF NOT EXISTS review_keys (
    kind         text NOT NULL CHECK (kind IN ('source', 'document')),
    key          text NOT NULL,      -- the source's name, or the document's id
    answer_id    bigint NOT NULL REFERENCES answers(id),
    verified_at  timestamptz NOT NULL,
    PRIMARY KEY (kind, key, answer_id)
);
CREATE INDEX IF NOT EXISTS review_keys_newest ON review_keys (kind, key, verified_at DESC, answer_id DESC);

CREATE TABLE IF NOT EXISTS review_answer_versions (
    answer_id    bigint NOT NULL REFERENCES answers(id),
    version_id   bigint NOT NULL REFERENCES document_versions(id),
    document_id  bigint NOT NULL,
    source       text NOT NULL,
    acl_groups   text[] NOT NULL,
    cited        boolean NOT NULL,   -- cited by a claim (else only among the search's results)
    PRIMARY KEY (answer_id, version_id)
);

-- One answer's derived rows. Chunk ids in the record are whole numbers (the draft's parser and
-- the search log's shape check, 017, make sure); anything else is skipped, never cast.
CREATE OR REPLACE FUNCTION rag_review_index(answer answers) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO review_queue (answer_id, verified_at, verdict, state)
    VALUES (answer.id, answer.verified_at, answer.verdict,
            CASE WHEN answer.verdict = 'verified' THEN 'verified' ELSE 'open' END)
    ON CONFLICT (answer_id) DO NOTHING;
    INSERT INTO review_answer_versions (answer_id, version_id, document_id, source, acl_groups, cited)
    SELECT answer.id, v.id, d.id, d.source, v.acl_groups, bool_or(x.cited)
    FROM (SELECT cit ->> 'chunk_id' AS chunk_id, true AS cited
          FROM jsonb_array_elements(CASE WHEN jsonb_typeof(answer.claims) = 'array' THEN answer.claims ELSE '[]' END) cl,
               jsonb_array_elements(CASE WHEN jsonb_typeof(cl -> 'citations') = 'array' THEN cl -> 'citations' ELSE '[]' END) cit
          UNION ALL
          SELECT h ->> 'chunk_id', false
          FROM search_log l, jsonb_array_elements(l.results) h
          WHERE l.id = answer.search_id AND jsonb_typeof(l.results) = 'array') x
    JOIN chunks c ON x.chunk_id ~ '^[0-9]{1,18}$' AND c.id = x.chunk_id::bigint
    JOIN document_versions v ON v.id = c.version_id
    JOIN documents d ON d.id = v.document_id
    GROUP BY v.id, d.id, d.source, v.acl_groups
    ON CONFLICT DO NOTHING;
    INSERT INTO review_keys (kind, key, answer_id, verified_at)
    SELECT DISTINCT k.kind, k.key, answer.id, answer.verified_at
    FROM review_answer_versions r
    CROSS JOIN LATERAL (VALUES ('source', r.source), ('document', r.document_id::text)) k(kind, key)
    WHERE r.answer_id = answer.id AND r.cited
    ON CONFLICT DO NOTHING;
END $$;

CREATE OR REPLACE FUNCTION rag_review_answer_recorded() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    PERFORM rag_review_index(NEW);
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS answers_review_index ON answers;
CREATE TRIGGER answers_review_index AFTER INSERT ON answers
    FOR EACH ROW EXECUTE FUNCTION rag_review_answer_recorded();

-- The answers recorded before this migration.
SELECT rag_review_index(a) FROM answers a WHERE NOT EXISTS (SELECT 1 FROM review_queue q WHERE q.answer_id = a.id);

-- A decision's time and login are the server's, whatever a client gave (as the search log's, 017).
CREATE OR REPLACE FUNCTION rag_review_decision_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT rag_acting_as_superuser() THEN
        NEW.decided_at := now();
        NEW.db_user := session_user;
    END IF;
    RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS review_decisions_stamp ON review_decisions;
CREATE TRIGGER review_decisions_stamp BEFORE INSERT ON review_decisions
    FOR EACH ROW EXECUTE FUNCTION rag_review_decision_stamp();

-- The latest decision (by id) is the answer's state.
CREATE OR REPLACE FUNCTION rag_review_decided() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE review_queue SET state = NEW.decision, decision_id = NEW.id, decided_at = NEW.decided_at
    WHERE answer_id = NEW.answer_id AND (decision_id IS NULL OR decision_id < NEW.id);
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS review_decisions_state ON review_decisions;
CREATE TRIGGER review_decisions_state AFTER INSERT ON review_decisions
    FOR EACH ROW EXECUTE FUNCTION rag_review_decided();

DROP TRIGGER IF EXISTS review_decisions_append_only ON review_decisions;
CREATE TRIGGER review_decisions_append_only BEFORE UPDATE OR DELETE ON review_decisions
    FOR EACH ROW EXECUTE FUNCTION rag_refuse_rewrite();
DROP TRIGGER IF EXISTS review_decisions_no_truncate ON review_decisions;
CREATE TRIGGER review_decisions_no_truncate BEFORE TRUNCATE ON review_decisions
    FOR EACH STATEMENT EXECUTE FUNCTION rag_refuse_rewrite();
DROP TRIGGER IF EXISTS review_views_append_only ON review_views;
CREATE TRIGGER review_views_append_only BEFORE UPDATE OR DELETE ON review_views
    FOR EACH ROW EXECUTE FUNCTION rag_refuse_rewrite();
DROP TRIGGER IF EXISTS review_views_no_truncate ON review_views;
CREATE TRIGGER review_views_no_truncate BEFORE TRUNCATE ON review_views
    FOR EACH STATEMENT EXECUTE FUNCTION rag_refuse_rewrite();

-- The writer (the login the review screen runs as): reviewers are managed, decisions and views
-- appended, the derived tables read only (the triggers write them as their owner).
REVOKE UPDATE, DELETE, TRUNCATE ON review_decisions, review_views FROM rag_writer;
GRANT SELECT, INSERT ON review_decisions, review_views TO rag_writer;
GRANT USAGE ON SEQUENCE review_decisions_id_seq, review_views_id_seq TO rag_writer;
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON review_queue, review_keys, review_answer_versions FROM rag_writer;
GRANT SELECT ON review_queue, review_keys, review_answer_versions TO rag_writer;
REVOKE DELETE, TRUNCATE ON reviewers FROM rag_writer;
GRANT SELECT, INSERT, UPDATE ON reviewers TO rag_writer;
-- The reader (a RAG service) has nothing to do with reviews; compliance reads the decisions and
-- the page views, never the password hashes.
REVOKE ALL ON reviewers, review_decisions, review_views, review_queue, review_keys, review_answer_versions FROM rag_reader;
GRANT SELECT ON review_decisions, review_views TO rag_compliance;
