-- Issue 12: the encoding backend's numerics are part of a model's identity. Backends whose
-- vectors agree with torch fp32 within tolerance record 'fp32' (the same model); any other
-- (e.g. bfloat16 beyond tolerance) records its own name and so is a different model.
ALTER TABLE embedding_models ADD COLUMN numerics text NOT NULL DEFAULT 'fp32';
ALTER TABLE embedding_models DROP CONSTRAINT embedding_models_name_revision_weights_sha256_key;
ALTER TABLE embedding_models ADD CONSTRAINT embedding_models_identity_key UNIQUE (name, revision, weights_sha256, numerics);
