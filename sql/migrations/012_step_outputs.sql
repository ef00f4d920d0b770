-- Issue 12: the small values Dagster passes between the steps of a sharded sync (the list of
-- shards, each shard's counts), kept in the index database so that steps on other machines
-- (Celery or Kubernetes executors) read them without a shared disk. Dropped with the run's
-- work items when the run finishes.
CREATE TABLE step_outputs (
    run_id text NOT NULL,
    output_key text NOT NULL,
    value jsonb NOT NULL,
    written_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, output_key)
);
