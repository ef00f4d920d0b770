"""Dagster definitions, loaded by `rag_pipeline.definitions` (workspace.yaml, `dg`)."""
