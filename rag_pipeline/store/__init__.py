"""Every SQL statement of the project besides sql/: parameterised, never built from user text.

One module per concern; callers use them as `store.runs.get_run(conn, ...)`. Each function takes
an open connection and documents whether it commits; document writes are one transaction.
"""

from rag_pipeline.store import (
    answers,
    bm25,
    bm25_stats,
    embeddings,
    history,
    migrations,
    model_switches,
    model_vectors,
    models,
    paragraph_digests,
    purge,
    quarantine,
    refusal,
    reviews,
    roles,
    runs,
    search,
    search_log,
    search_prepare,
    source_fingerprints,
    status,
    step_outputs,
    versions,
    work_items,
)

__all__ = [
    "answers",
    "bm25",
    "bm25_stats",
    "embeddings",
    "history",
    "migrations",
    "model_switches",
    "model_vectors",
    "models",
    "paragraph_digests",
    "purge",
    "quarantine",
    "refusal",
    "reviews",
    "roles",
    "runs",
    "search",
    "search_prepare",
    "search_log",
    "source_fingerprints",
    "status",
    "step_outputs",
    "versions",
    "work_items",
]
