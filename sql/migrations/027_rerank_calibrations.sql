-- 027 (issue 23, item 4): rerank weights fitted, not hand-set. `rag-pipeline calibrate-rerank`
-- fits the rerank stage's feature weights on an evaluation set's calibration half
-- (retrieval/rerank_fit.py: coordinate ascent over a fixed grid, deterministic) and appends them
-- here, per model, with the objective on both halves. A search uses the newest row of its model
-- calibrated at or before the time it searches as of (the live index: the newest), so a replay of
-- a logged search reorders with the weights it ran with; the row's id is logged with the search.
-- Append-only: a past search's weights must stay readable. Every statement is idempotent.

CREATE TABLE IF NOT EXISTS rerank_calibrations (
    id                 bigserial PRIMARY KEY,
    model_id           integer NOT NULL REFERENCES embedding_models(id),
    weights            jsonb NOT NULL,              -- feature name -> weight (retrieval/rerank.py)
    objective          text NOT NULL,               -- what was maximised, e.g. 'ndcg@10'
    eval_set           text NOT NULL,
    eval_set_sha256    text NOT NULL,
    calibration_cases  integer NOT NULL,
    held_out_cases     integer NOT NULL,
    calibration_before double precision NOT NULL,   -- the objective with the weights in force before
    calibration_after  double precision NOT NULL,
    held_out_before    double precision NOT NULL,
    held_out_after     double precision NOT NULL,
    calibrated_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT rerank_weights_object CHECK (jsonb_typeof(weights) = 'object')
);
CREATE INDEX IF NOT EXISTS rerank_calibrations_latest ON rerank_calibrations (model_id, calibrated_at DESC, id DESC);

GRANT SELECT, INSERT ON rerank_calibrations TO rag_writer;
REVOKE UPDATE, DELETE, TRUNCATE ON rerank_calibrations FROM rag_writer;
GRANT USAGE, SELECT ON SEQUENCE rerank_calibrations_id_seq TO rag_writer;
GRANT SELECT ON rerank_calibrations TO rag_reader, rag_compliance;  -- search reads the weights in force
