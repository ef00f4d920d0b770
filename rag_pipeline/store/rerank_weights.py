"""Fitted rerank weights, kept with the index per model (migration 027). Append-only: a logged
search names the row it reordered with, and a replay reads it again."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from rag_pipeline.store._sql import row


def save_rerank_calibration(conn: psycopg.Connection, fields: dict[str, Any]) -> int:
    """Record fitted weights; the newest per model is in force from now on. Commits; the row's id."""
    with conn.transaction():
        found = conn.execute(
            "INSERT INTO rerank_calibrations (model_id, weights, objective, eval_set, eval_set_sha256,"
            " calibration_cases, held_out_cases, calibration_before, calibration_after, held_out_before, held_out_after)"
            " VALUES (%(model_id)s, %(weights)s, %(objective)s, %(eval_set)s, %(eval_set_sha256)s, %(calibration_cases)s,"
            " %(held_out_cases)s, %(calibration_before)s, %(calibration_after)s, %(held_out_before)s, %(held_out_after)s)"
            " RETURNING id",
            {**fields, "weights": Jsonb(fields["weights"])},
        ).fetchone()
    return int(found[0])


def latest_rerank_calibration(conn: psycopg.Connection, model_id: int) -> dict[str, Any] | None:
    """The weights in force for the live index of this model (None: the defaults), its id also
    as `calibration_id`, the key a search reads it under."""
    return row(conn, "SELECT id AS calibration_id, * FROM rerank_calibrations WHERE model_id = %s ORDER BY calibrated_at DESC, id DESC LIMIT 1",
               (model_id,))
