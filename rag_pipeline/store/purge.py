"""Purge (migration 018): the text and vectors of document versions removed for every role, the
versions' metadata and hashes kept, and the purge recorded. The SQL only; what a purge does to
the blob store and in which order is sync/purge.py's.

The chunk rows stay (ids, order, section path, pages, offsets, token count, content hash): the
search log and the answer record point at them, and an audit can still say what was where. Only
the configured login (the schema's owner) may purge: no rag_* role may update chunks or write
the purge record."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from rag_pipeline.store._sql import rows


def lock_versions(conn: psycopg.Connection, source: str, uri: str) -> list[dict[str, Any]]:
    """Every version of the document (discarded attempts too: their chunks hold text as well),
    oldest first, locked until the caller's transaction ends: a publish of the document, and an
    access-only version copying its live chunks (store.versions.stage_acl_version), wait for the
    purge, then see it. Each with its purge (None if not purged) and whether its run still runs."""
    return rows(conn,
        "SELECT v.id, v.version_no, v.kind, v.status, v.checksum, v.blob_sha256, v.run_id,"
        " r.status = 'running' AS run_running,"
        # purged: by its own record, or born purged (an access-only copy of a purged version)
        " coalesce(p.purged_at, (SELECT c.purged_at FROM chunks c WHERE c.version_id = v.id ORDER BY c.ord LIMIT 1))"
        " AS purged_at, p.reason, (SELECT count(*) FROM chunks c WHERE c.version_id = v.id) AS chunks"
        " FROM document_versions v JOIN documents d ON d.id = v.document_id"
        " JOIN runs r ON r.run_id = v.run_id LEFT JOIN purges p ON p.version_id = v.id"
        " WHERE d.source = %s AND d.uri = %s ORDER BY v.version_no, v.id FOR UPDATE OF v",
        (source, uri),
    )


def running_items(conn: psycopg.Connection, source: str, uri: str) -> list[str]:
    """Runs still running that hold the document as a work item (its parsed text, chunks or
    vectors may be in flight there)."""
    return [r[0] for r in conn.execute(
        "SELECT DISTINCT i.run_id FROM run_items i JOIN runs r ON r.run_id = i.run_id"
        " WHERE i.source = %s AND i.uri = %s AND r.status = 'running' ORDER BY 1",
        (source, uri),
    )]


def blob_users(conn: psycopg.Connection, sha256: str, purged_now: Sequence[int]) -> list[str]:
    """Who else needs the stored bytes `sha256`: versions not purged (and not being purged now),
    of any document, as 'source/uri vN'; and running work items. Empty: the bytes may go."""
    return [r[0] for r in conn.execute(
        "SELECT d.source || '/' || d.uri || ' v' || v.version_no FROM document_versions v"
        " JOIN documents d ON d.id = v.document_id"
        " WHERE v.blob_sha256 = %(sha)s AND v.status <> 'discarded' AND v.id <> ALL(%(now)s)"
        " AND NOT EXISTS (SELECT 1 FROM purges p WHERE p.version_id = v.id)"
        " UNION ALL SELECT 'run ' || i.run_id || ' (' || i.source || '/' || i.uri || ')' FROM run_items i"
        " JOIN runs r ON r.run_id = i.run_id WHERE i.blob_sha256 = %(sha)s AND r.status = 'running'"
        " ORDER BY 1 LIMIT 5",
        {"sha": sha256, "now": list(purged_now)},
    )]


def purge_version(conn: psycopg.Connection, version_id: int, reason: str, purged_by: str | None, blob: str) -> int:
    """Record the purge of one version and remove its chunks' text, search prefix, vector and
    full-text terms (the only UPDATE chunks' trigger allows, and only after the record exists).
    Returns the chunks purged. Does not commit: the caller's transaction also counts the
    statistics out (bm25_stats.apply_purge) before this runs."""
    conn.execute(
        "INSERT INTO purges (version_id, reason, purged_by, chunks, blob)"
        " SELECT %(id)s, %(reason)s, %(by)s, count(*), %(blob)s FROM chunks WHERE version_id = %(id)s",
        {"id": version_id, "reason": reason, "by": purged_by, "blob": blob},
    )
    return conn.execute(
        "UPDATE chunks SET text = '', search_prefix = NULL, embedding = NULL, tsv = ''::tsvector, purged_at = now()"
        " WHERE version_id = %s AND purged_at IS NULL",
        (version_id,),
    ).rowcount


def purged_chunks(conn: psycopg.Connection, chunk_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """Of the given chunks, the purged ones: when, and the record of their version's purge (an
    access-only version copied from a purged one has its chunks purged without a record)."""
    if not chunk_ids:
        return {}
    found = rows(conn,
        "SELECT c.id AS chunk_id, c.purged_at, p.reason, p.purged_by, p.db_user FROM chunks c"
        " LEFT JOIN purges p ON p.version_id = c.version_id"
        " WHERE c.id = ANY(%s) AND c.purged_at IS NOT NULL",
        (list(chunk_ids),),
    )
    return {r.pop("chunk_id"): r for r in found}


def version_purge(conn: psycopg.Connection, version_id: int) -> dict[str, Any] | None:
    """The purge record of a version (when, why, by whom, what went), or None."""
    found = rows(conn,
        "SELECT purged_at, reason, purged_by, db_user, chunks, blob FROM purges WHERE version_id = %s",
        (version_id,),
    )
    return found[0] if found else None
