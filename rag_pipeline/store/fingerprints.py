"""Paragraph fingerprints per document, to find notices repeated across a source."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg


def replace_fingerprints(conn: psycopg.Connection, source: str, uri: str, fingerprints: set[str]) -> None:
    """A document's paragraph fingerprints, replacing its previous set. Does not commit."""
    conn.execute("DELETE FROM paragraph_fingerprints WHERE source = %s AND uri = %s", (source, uri))
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO paragraph_fingerprints (source, fingerprint, uri) VALUES (%s, %s, %s)",
            [(source, fp, uri) for fp in sorted(fingerprints)],
        )


def drop_fingerprints(conn: psycopg.Connection, source: str, uris: Sequence[str]) -> None:
    conn.execute("DELETE FROM paragraph_fingerprints WHERE source = %s AND uri = ANY(%s)", (source, list(uris)))


def fingerprint_counts(conn: psycopg.Connection, source: str, fingerprints: Sequence[str]) -> tuple[dict[str, int], int]:
    """How many documents of the source carry each fingerprint, and how many documents it has."""
    rows = conn.execute(
        "SELECT fingerprint, count(*) FROM paragraph_fingerprints WHERE source = %s AND fingerprint = ANY(%s)"
        " GROUP BY fingerprint",
        (source, list(fingerprints)),
    ).fetchall()
    total = conn.execute(
        "SELECT count(DISTINCT uri) FROM paragraph_fingerprints WHERE source = %s", (source,)
    ).fetchone()[0]
    return {r[0]: r[1] for r in rows}, total
