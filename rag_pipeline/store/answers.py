"""The answer record (migration 016): what a cited chunk is and was, how much of a claim's
terms a chunk holds, appending a verification, the verifications of a search, and the support
thresholds calibrated from labelled answers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg

from rag_pipeline.store._sql import row, rows
from rag_pipeline.store.search_view import VECTOR


def cited_chunks(conn: psycopg.Connection, chunk_ids: Sequence[int], model_id: int | None = None) -> dict[int, dict[str, Any]]:
    """Each existing chunk of `chunk_ids` with its text, embedding, version (number, status,
    validity, access groups), document, and the version that replaced it (the next published
    one; a tombstone when the document was removed). Read as the login sees the index: the
    checks compare access groups themselves. The embedding is the chunk's vector of `model_id`
    (its own, or the one a model migration gave it; None when it has none), so a claim is
    compared in the space of the model the search ran on; `model_id` None: the chunk's own."""
    if not chunk_ids:
        return {}
    vector = "c.embedding" if model_id is None else VECTOR
    found = rows(
        conn,
        f"SELECT c.id AS chunk_id, c.text, {vector} AS embedding, c.model_id, c.ts_config::text AS ts_config,"  # noqa: S608 -- fixed fragments
        " c.section_path, c.search_prefix, c.page_start, c.page_end, v.id AS version_id, v.version_no, v.status, v.kind,"
        " v.valid_from, v.valid_to, v.acl_groups, v.language, d.source, d.uri,"
        " n.version_no AS replaced_by_version, n.kind AS replaced_by_kind, n.valid_from AS replaced_at"
        " FROM chunks c JOIN document_versions v ON v.id = c.version_id JOIN documents d ON d.id = v.document_id"
        " LEFT JOIN LATERAL (SELECT nv.version_no, nv.kind, nv.valid_from FROM document_versions nv"
        "   WHERE nv.document_id = v.document_id AND nv.version_no > v.version_no"
        "   AND nv.status IN ('live', 'superseded', 'tombstoned') ORDER BY nv.version_no LIMIT 1) n ON true"
        " WHERE c.id = ANY(%(ids)s)",
        {"ids": sorted(set(chunk_ids)), "model_id": model_id},
    )
    for found_row in found:
        embedding = found_row.pop("embedding")
        found_row["embedding"] = None if embedding is None else np.asarray(embedding.to_numpy(), dtype=np.float32)
    return {r["chunk_id"]: r for r in found}


def term_coverage(conn: psycopg.Connection, pairs: Sequence[tuple[int, str]]) -> list[float]:
    """For each (chunk id, claim), the share of the claim's lexemes the chunk's text-search vector
    holds, the claim normalised under the chunk's own configuration (stemming and stop words of
    its language, as the full-text branch of a search does). 0 for a claim without lexemes."""
    if not pairs:
        return []
    found = conn.execute(
        "SELECT p.i, coalesce((SELECT count(*) FILTER (WHERE t.lexeme = ANY(tsvector_to_array(c.tsv)))::float8"
        "   / nullif(count(*), 0) FROM unnest(to_tsvector(c.ts_config, p.claim)) t), 0)"
        " FROM unnest(%s::bigint[], %s::text[]) WITH ORDINALITY AS p(chunk_id, claim, i)"
        " JOIN chunks c ON c.id = p.chunk_id",
        ([p[0] for p in pairs], [p[1] for p in pairs]),
    ).fetchall()
    by_index = {int(r[0]): float(r[1]) for r in found}
    return [by_index.get(i, 0.0) for i in range(1, len(pairs) + 1)]


def now(conn: psycopg.Connection) -> Any:
    return conn.execute("SELECT now()").fetchone()[0]


def record_answer(conn: psycopg.Connection, fields: dict[str, Any]) -> int:
    """Append one verification; returns its id. Commits unless inside an open transaction."""
    with conn.transaction():
        found = conn.execute(
            "INSERT INTO answers (search_id, judged_as_of, caller, draft, claims, verdict, message, model_id,"
            " support_threshold, support_coverage_weight, support_source, support_calibration_id, support_polarity_weight,"
            " support_crosslingual_threshold, needs_review)"
            " VALUES (%(search_id)s, %(judged_as_of)s, %(caller)s, %(draft)s::jsonb, %(claims)s::jsonb, %(verdict)s,"
            " %(message)s, %(model_id)s, %(support_threshold)s, %(support_coverage_weight)s, %(support_source)s,"
            " %(support_calibration_id)s, %(support_polarity_weight)s, %(support_crosslingual_threshold)s,"
            " %(needs_review)s) RETURNING id",
            {"needs_review": False, **fields, "draft": json.dumps(fields["draft"]), "claims": json.dumps(fields["claims"], default=str)},
        ).fetchone()
    return int(found[0])


def answers_for_search(conn: psycopg.Connection, log_id: int) -> list[dict[str, Any]]:
    """The verifications recorded against one logged search, oldest first."""
    return rows(
        conn,
        "SELECT id AS answer_id, verified_at, judged_as_of, caller, db_user, verdict, message, claims,"
        " support_threshold, support_coverage_weight, support_source FROM answers WHERE search_id = %s ORDER BY id",
        (log_id,),
    )


def save_support_calibration(conn: psycopg.Connection, fields: dict[str, Any]) -> int:
    """Record a support calibration; the newest one per model is in force. Commits."""
    with conn.transaction():
        found = conn.execute(
            "INSERT INTO support_calibrations (model_id, threshold, coverage_weight, polarity_weight, eval_set,"
            " eval_set_sha256, supported, unsupported, supported_accuracy, unsupported_accuracy,"
            " crosslingual_threshold, crosslingual_supported, crosslingual_unsupported)"
            " VALUES (%(model_id)s, %(threshold)s, %(coverage_weight)s, %(polarity_weight)s, %(eval_set)s,"
            " %(eval_set_sha256)s, %(supported)s, %(unsupported)s, %(supported_accuracy)s, %(unsupported_accuracy)s,"
            " %(crosslingual_threshold)s, %(crosslingual_supported)s, %(crosslingual_unsupported)s)"
            " RETURNING id",
            fields,
        ).fetchone()
    return int(found[0])


def latest_support_calibration(conn: psycopg.Connection, model_id: int) -> dict[str, Any] | None:
    return row(
        conn,
        "SELECT * FROM support_calibrations WHERE model_id = %s ORDER BY calibrated_at DESC, id DESC LIMIT 1",
        (model_id,),
    )


def chunk_holding(conn: psycopg.Connection, phrase: str, uri: str | None, as_of: Any = None) -> int | None:
    """The first chunk (by id) of a version valid now (or at `as_of`) whose text holds `phrase`,
    ignoring case and whitespace runs, optionally of one document (URI with or without its
    source): how an evaluation's answer case names a passage outside its search's results."""
    from rag_pipeline.store.search import VISIBLE_AS_OF

    needle = " ".join(phrase.split()).casefold().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    visible = VISIBLE_AS_OF if as_of is not None else "v.status = 'live'"
    statement = (
        "SELECT c.id FROM chunks c JOIN document_versions v ON v.id = c.version_id JOIN documents d ON d.id = v.document_id"  # noqa: S608
        f" WHERE {visible} AND lower(regexp_replace(c.text, '\\s+', ' ', 'g')) LIKE %(like)s"
        " AND (%(uri)s::text IS NULL OR normalize(d.uri, NFC) = normalize(%(uri)s, NFC)"
        " OR normalize(d.source || '/' || d.uri, NFC) = normalize(%(uri)s, NFC)) ORDER BY c.id LIMIT 1"
    )  # the visibility clause is a fixed fragment; values are parameters
    found = conn.execute(
        statement,
        {"like": f"%{needle}%", "uri": uri, "as_of": as_of},
    ).fetchone()
    return None if found is None else int(found[0])
