-- Issue 8: refusal compares the first result's similarity plus a calibrated weight times its
-- term coverage (rag_pipeline/refusal.py). Calibrations from before this weighed coverage 0.
ALTER TABLE refusal_calibrations ADD COLUMN coverage_weight double precision NOT NULL DEFAULT 0;
-- The weight a run's gate evaluated with, beside its threshold.
ALTER TABLE runs ADD COLUMN refusal_coverage_weight double precision;
