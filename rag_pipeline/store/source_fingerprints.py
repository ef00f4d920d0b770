"""Listing fingerprints (S3 ETag+size: what the listing says of an object, no bytes read; the
project's one meaning of "fingerprint", see sources.fingerprint) and the content SHA-256 they
were found to have."""

from __future__ import annotations

from collections.abc import Iterable

import psycopg


def load_fingerprints(conn: psycopg.Connection, source: str) -> dict[str, tuple[str, str]]:
    """uri -> (fingerprint, sha256) for every object of the source seen with a fingerprint."""
    rows = conn.execute(
        "SELECT uri, fingerprint, sha256 FROM source_fingerprints WHERE source = %s", (source,)
    ).fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


def record_fingerprints(conn: psycopg.Connection, source: str, entries: Iterable[tuple[str, str, str]]) -> None:
    """Remember (uri, fingerprint, sha256) triples, replacing older ones. Does not commit."""
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO source_fingerprints (source, uri, fingerprint, sha256) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (source, uri) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,"
            " sha256 = EXCLUDED.sha256, recorded_at = now()",
            [(source, uri, fingerprint, sha256) for uri, fingerprint, sha256 in entries],
        )
