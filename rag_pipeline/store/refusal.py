"""Calibrated refusal thresholds, kept with the index (per model and search mode)."""

from __future__ import annotations

from typing import Any

import psycopg

from rag_pipeline.store._sql import row


def save_calibration(conn: psycopg.Connection, fields: dict[str, Any]) -> None:
    """Record a calibration; the newest one per model and mode is in force. Commits."""
    with conn.transaction():
        conn.execute(
            "INSERT INTO refusal_calibrations (model_id, mode, threshold, coverage_weight, eval_set, eval_set_sha256,"
            " must_answer, must_refuse, answer_accuracy, refuse_accuracy)"
            " VALUES (%(model_id)s, %(mode)s, %(threshold)s, %(coverage_weight)s, %(eval_set)s, %(eval_set_sha256)s,"
            " %(must_answer)s, %(must_refuse)s, %(answer_accuracy)s, %(refuse_accuracy)s)",
            fields,
        )


def latest_calibration(conn: psycopg.Connection, model_id: int, mode: str) -> dict[str, Any] | None:
    return row(
        conn,
        "SELECT * FROM refusal_calibrations WHERE model_id = %s AND mode = %s"
        " ORDER BY calibrated_at DESC, id DESC LIMIT 1",
        (model_id, mode),
    )
