"""Upkeep a writer owes the searches after it: the GIN indexes' pending lists merged (migration 037).

PostgreSQL's GIN indexes take new rows into a pending list that every scan of the index reads in
full; it is merged only when it outgrows 4 MB or when autovacuum comes by. A sync that wrote
chunks would otherwise leave up to 4 MB of the full-text index unsorted, and every search would
pay for it until then. The merge is the same work autovacuum would do, done once by the writer
that caused it."""

from __future__ import annotations

import psycopg


def flush_pending_lists(conn: psycopg.Connection) -> int:
    """Merge the pending lists of the schema's GIN indexes; returns the pages merged. Runs in
    the caller's transaction if one is open (the merge itself is not undone by a rollback)."""
    return int(conn.execute("SELECT rag_flush_pending_lists()").fetchone()[0])
