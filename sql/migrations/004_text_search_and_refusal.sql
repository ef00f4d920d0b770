-- 004: full-text search per document language, and refusal calibrated from an evaluation set.

-- Accent folding for languages PostgreSQL has no stemmer for (Czech, Korean, ...): lower-case,
-- strip accents, no stemming. unaccent is a trusted extension (a database owner may create it).
CREATE EXTENSION IF NOT EXISTS unaccent;
CREATE TEXT SEARCH CONFIGURATION simple_unaccent (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION simple_unaccent
    ALTER MAPPING FOR word, hword, hword_part, asciiword, asciihword, hword_asciipart WITH unaccent, simple;

-- The configuration each chunk's tsv was built with: queries are turned into lexemes under the
-- same configuration. Existing chunks were built with 'simple'.
ALTER TABLE chunks ADD COLUMN ts_config regconfig NOT NULL DEFAULT 'simple';
CREATE INDEX chunks_ts_config ON chunks (ts_config);
-- The document's detected language (ISO 639-1; NULL when too little text to tell).
ALTER TABLE document_versions ADD COLUMN language text;

-- Refusal thresholds calibrated from the must-answer / must-refuse questions of an evaluation
-- set, per model and search mode; the newest row is the one searches use.
CREATE TABLE refusal_calibrations (
    id               bigserial PRIMARY KEY,
    model_id         integer NOT NULL REFERENCES embedding_models(id),
    mode             text NOT NULL,
    threshold        double precision NOT NULL,
    eval_set         text NOT NULL,
    eval_set_sha256  text NOT NULL,
    must_answer      integer NOT NULL,
    must_refuse      integer NOT NULL,
    answer_accuracy  double precision NOT NULL,
    refuse_accuracy  double precision NOT NULL,
    calibrated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refusal_calibrations_latest ON refusal_calibrations (model_id, mode, calibrated_at DESC);
-- The threshold a run's gate evaluated with.
ALTER TABLE runs ADD COLUMN refusal_threshold double precision;
