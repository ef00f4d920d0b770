"""What `rag-pipeline status` reports: live documents and chunks per source, quarantine."""

from __future__ import annotations

from typing import Any

import psycopg

from rag_pipeline.store.models import live_model_ids
from rag_pipeline.store.quarantine import CURRENT_QUARANTINE


def index_status(conn: psycopg.Connection) -> dict[str, Any]:
    per_source = conn.execute(
        "SELECT d.source, count(DISTINCT v.id), count(c.id) FROM document_versions v"
        " JOIN documents d ON d.id = v.document_id LEFT JOIN chunks c ON c.version_id = v.id"
        " WHERE v.status = 'live' GROUP BY d.source ORDER BY d.source"
    ).fetchall()
    quarantined = conn.execute(
        "SELECT count(*) FROM (" + CURRENT_QUARANTINE + ") latest"  # noqa: S608 -- constants only
        " WHERE NOT EXISTS (SELECT 1 FROM document_versions v JOIN documents d ON d.id = v.document_id"
        "  WHERE d.source = latest.source AND d.uri = latest.uri AND v.checksum = latest.checksum"
        "  AND v.status = 'live')"
    ).fetchone()[0]
    models = live_model_ids(conn)
    # live chunks with a vector of the multilingual model (migration 034), by that model
    multilingual = conn.execute(
        "SELECT x.model, count(*) FROM chunk_multilingual x JOIN chunks c ON c.id = x.chunk_id"
        " JOIN document_versions v ON v.id = c.version_id WHERE v.status = 'live' GROUP BY x.model ORDER BY x.model"
    ).fetchall()
    return {
        "sources": {r[0]: {"live_documents": r[1], "live_chunks": r[2]} for r in per_source},
        "quarantined_files": quarantined,
        "model_ids": models,
        "multilingual_vectors": {r[0]: r[1] for r in multilingual},
    }


def source_run_figures(conn: psycopg.Connection, run_id: str, source: str) -> dict[str, int]:
    """What one run did to one source (an all-sources run's counts are its total): the content
    versions and tombstones it wrote for the source (live, or staged and discarded if it did
    not publish) and the source's files it quarantined."""
    written = dict(conn.execute(
        "SELECT v.kind, count(*) FROM document_versions v JOIN documents d ON d.id = v.document_id"
        " WHERE v.run_id = %s AND d.source = %s GROUP BY v.kind",
        (run_id, source),
    ).fetchall())
    quarantined = conn.execute("SELECT count(*) FROM quarantine WHERE run_id = %s AND source = %s",
                               (run_id, source)).fetchone()
    return {"versions": int(written.get("content", 0)), "tombstones": int(written.get("tombstone", 0)),
            "quarantined": int(quarantined[0]) if quarantined else 0}
