"""Embedding reuse: stored vectors of identical model input under the same model."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import psycopg

from rag_pipeline.store import model_vectors


def find_embeddings(conn: psycopg.Connection, hashes: Sequence[str], model_id: int) -> dict[str, np.ndarray]:
    """Stored embeddings of chunks with the same model input under the same model: reused
    instead of re-embedding unchanged text (a purged chunk has none). A model migration's
    vectors (model_vectors) count: the first sync after its switch re-embeds only what changed."""
    return model_vectors.known_vectors(conn, hashes, model_id)
