"""Embedding reuse: stored vectors of identical model input under the same model."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import psycopg


def find_embeddings(conn: psycopg.Connection, hashes: Sequence[str], model_id: int) -> dict[str, np.ndarray]:
    """Stored embeddings of chunks with the same model input under the same model: reused
    instead of re-embedding unchanged text."""
    if not hashes:
        return {}
    rows = conn.execute(
        "SELECT DISTINCT ON (content_hash) content_hash, embedding FROM chunks"
        " WHERE model_id = %s AND content_hash = ANY(%s) AND embedding IS NOT NULL",  # a purged chunk has none
        (model_id, list(set(hashes))),
    ).fetchall()
    return {r[0]: np.asarray(r[1].to_numpy(), dtype=np.float32) for r in rows}
