"""Paragraph digests per document (cleaning.notices), to find notices repeated across a source.

They live in the table `paragraph_fingerprints` (column `fingerprint`), named before the project
kept "fingerprint" for a listing's cheap identity (sources.fingerprint); migrations are never
edited, so the table keeps its name."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg


def replace_digests(conn: psycopg.Connection, source: str, uri: str, digests: set[str]) -> None:
    """A document's paragraph digests, replacing its previous set. Does not commit."""
    conn.execute("DELETE FROM paragraph_fingerprints WHERE source = %s AND uri = %s", (source, uri))
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO paragraph_fingerprints (source, fingerprint, uri) VALUES (%s, %s, %s)",
            [(source, digest, uri) for digest in sorted(digests)],
        )


def drop_digests(conn: psycopg.Connection, source: str, uris: Sequence[str]) -> None:
    conn.execute("DELETE FROM paragraph_fingerprints WHERE source = %s AND uri = ANY(%s)", (source, list(uris)))


def digest_counts(conn: psycopg.Connection, source: str, digests: Sequence[str]) -> tuple[dict[str, int], int]:
    """How many documents of the source carry each digest, and how many documents it has."""
    rows = conn.execute(
        "SELECT fingerprint, count(*) FROM paragraph_fingerprints WHERE source = %s AND fingerprint = ANY(%s)"
        " GROUP BY fingerprint",
        (source, list(digests)),
    ).fetchall()
    total = conn.execute(
        "SELECT count(DISTINCT uri) FROM paragraph_fingerprints WHERE source = %s", (source,)
    ).fetchone()[0]
    return {r[0]: r[1] for r in rows}, total
