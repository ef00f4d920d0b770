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
    return {
        "sources": {r[0]: {"live_documents": r[1], "live_chunks": r[2]} for r in per_source},
        "quarantined_files": quarantined,
        "model_ids": models,
    }
