-- 032 (issue 24): an answer whose claims all passed may still need a person: a claim that stands
-- only on citations judged across languages (answers/crosslingual.py) was judged by a multilingual
-- similarity that tells the passage's topic, not whether it says what the claim says. verify
-- records `needs_review` with the answer, and such an answer opens in the review queue as a
-- flagged one does (state 'open', verdict still 'verified'). Answers recorded before keep their
-- state. Every statement is idempotent.

ALTER TABLE answers ADD COLUMN IF NOT EXISTS needs_review boolean NOT NULL DEFAULT false;

-- 020's function, the queue state the only change.
CREATE OR REPLACE FUNCTION rag_review_index(answer answers) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO review_queue (answer_id, verified_at, verdict, state)
    VALUES (answer.id, answer.verified_at, answer.verdict,
            CASE WHEN answer.verdict = 'verified' AND NOT answer.needs_review THEN 'verified' ELSE 'open' END)
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
