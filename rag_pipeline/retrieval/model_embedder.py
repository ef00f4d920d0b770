"""The embedder of a model the index records: the configured one when it is that model, else the
model as its migration recorded it (model_sources), loaded once per process. After a switch,
searches and replays embed with the index's model without a configuration change."""

from __future__ import annotations

from typing import Any

import psycopg

from rag_pipeline import store
from rag_pipeline.embedding import Embedder, ModelError, load_embedder


def same_model(recorded: dict[str, Any], embedder: Embedder) -> bool:
    """Whether `embedder` computes the recorded model: same weights and numerics."""
    return (recorded.get("weights_sha256"), recorded.get("numerics", "fp32")) == (
        embedder.identity.weights_sha256, embedder.identity.numerics)


def embedder_for_model(conn: psycopg.Connection, recorded: dict[str, Any], like: Embedder) -> Embedder | None:
    """`like` when it is the recorded model; else the model as model_sources names it (with
    `like`'s device and batch size), if it loads as that identity; else None."""
    if same_model(recorded, like):
        return like
    source = store.model_switches.model_source(conn, int(recorded["id"]))
    if source is None:
        return None
    try:
        found = load_embedder(source["model"], like.device, like.batch_size, source["backend"])
        return found if same_model(recorded, found) else None
    except ModelError:
        return None
