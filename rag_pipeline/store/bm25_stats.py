"""The live statistics BM25 reads (migration 015), changed in the publishing transaction: what
became live counts in, what it replaced (superseded, or closed by a tombstone) counts out, each
under its version's access set. Readers therefore see statistics and index change at the same
instant. An access change moves a document's chunks from one set to the other. A purged chunk
(migration 018) has no terms and counts nowhere: a purge of a live version counts its chunks out
(`apply_purge`), and a later publish never counts them again.

A term whose df falls to 0 in an access set loses its row, and so does a set with no live chunk
left: a caller in that set would otherwise learn from the row that the word was once in a
document it may no longer read (revoked, deleted or purged content). Removing the row is safe
for the MaxScore bound: with no chunk of the set holding the term, the next one to come writes
its own weight as the bound."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

# The chunks of the versions that changed side, +1 (now live) or -1 (no longer live), per access
# set: the chunk counts, then each term's df and the upper bound of its weight (raised, never
# lowered: a bound over chunks gone from the live index is still a bound). The keys whose count
# reached 0 come back, to be deleted by the next statement (one statement may not both upsert
# and delete a row).
_PUBLISH = """
WITH moved AS MATERIALIZED (
    SELECT v.acl_groups, c.ts_config, c.tsv, c.token_count, s.sign
    FROM unnest(%(ids)s::bigint[], %(signs)s::int[]) AS s(id, sign)
    JOIN document_versions v ON v.id = s.id AND v.kind = 'content'
    JOIN chunks c ON c.version_id = s.id AND c.purged_at IS NULL
), corpus AS (
    INSERT INTO fts_acl_corpus AS f (acl_groups, ts_config, chunks)
    SELECT acl_groups, ts_config, sum(sign) FROM moved GROUP BY acl_groups, ts_config
    ON CONFLICT (acl_groups, ts_config) DO UPDATE SET chunks = f.chunks + excluded.chunks
    RETURNING f.acl_groups, f.ts_config, f.chunks
), terms AS (
INSERT INTO fts_acl_terms AS t (acl_groups, ts_config, lexeme, df, max_weight)
SELECT m.acl_groups, m.ts_config, u.lexeme, sum(m.sign),
       coalesce(max(rag_bm25_tf(coalesce(array_length(u.positions, 1), 1), m.token_count))
                FILTER (WHERE m.sign > 0), 0)
FROM moved m CROSS JOIN LATERAL unnest(m.tsv) u
GROUP BY 1, 2, 3
ORDER BY 2, 3, 1  -- the primary key's order: concurrent publishers lock rows in the same order
ON CONFLICT (ts_config, lexeme, acl_groups) DO UPDATE
SET df = t.df + excluded.df, max_weight = greatest(t.max_weight, excluded.max_weight)
RETURNING t.acl_groups, t.ts_config, t.lexeme, t.df
)
SELECT 'terms', acl_groups, ts_config::text, lexeme FROM terms WHERE df <= 0
UNION ALL SELECT 'corpus', acl_groups, ts_config::text, NULL FROM corpus WHERE chunks <= 0
"""

_DROP_EMPTY_TERMS = """
DELETE FROM fts_acl_terms t USING unnest(%(sets)s::text[], %(cfgs)s::regconfig[], %(lexemes)s::text[]) AS e(s, cfg, lexeme)
WHERE t.ts_config = e.cfg AND t.lexeme = e.lexeme AND t.acl_groups = e.s::text[] AND t.df <= 0
"""
_DROP_EMPTY_SETS = """
DELETE FROM fts_acl_corpus f USING unnest(%(sets)s::text[], %(cfgs)s::regconfig[]) AS e(s, cfg)
WHERE f.acl_groups = e.s::text[] AND f.ts_config = e.cfg AND f.chunks <= 0
"""


def apply_publish(conn: psycopg.Connection, became_live: Sequence[int], left_live: Sequence[int]) -> None:
    """Count the chunks of `became_live` versions in and those of `left_live` out (inside the
    caller's publishing transaction). Tombstones have no chunks and count nothing."""
    if not became_live and not left_live:
        return
    ids = list(became_live) + list(left_live)
    signs = [1] * len(became_live) + [-1] * len(left_live)
    emptied = conn.execute(_PUBLISH, {"ids": ids, "signs": signs}).fetchall()
    _drop_empty(conn, emptied)


def apply_purge(conn: psycopg.Connection, live_ids: Sequence[int]) -> None:
    """Count the chunks of live versions about to be purged out (inside the purging transaction,
    before their terms are removed): to full-text search they are gone, as if superseded."""
    apply_publish(conn, [], live_ids)


def _drop_empty(conn: psycopg.Connection, emptied: Sequence[tuple]) -> None:
    """Delete the term and set rows `_PUBLISH` brought to 0 (arrays travel as their text form:
    an array of arrays would have to be rectangular)."""
    terms = [r for r in emptied if r[0] == "terms"]
    sets = [r for r in emptied if r[0] == "corpus"]
    if terms:
        conn.execute(_DROP_EMPTY_TERMS, {"sets": [_array_text(r[1]) for r in terms], "cfgs": [r[2] for r in terms],
                                         "lexemes": [r[3] for r in terms]})
    if sets:
        conn.execute(_DROP_EMPTY_SETS, {"sets": [_array_text(r[1]) for r in sets], "cfgs": [r[2] for r in sets]})


def _array_text(groups: Sequence[str]) -> str:
    """A text[] literal of `groups`, every element quoted and escaped."""
    return "{" + ",".join('"' + g.replace("\\", "\\\\").replace('"', '\\"') + '"' for g in groups) + "}"


Counts = tuple[dict[tuple[tuple[str, ...], str], int], dict[tuple[tuple[str, ...], str, str], int]]


def recount(conn: psycopg.Connection) -> Counts:
    """The statistics counted from scratch (live chunks per access set and configuration, df per
    set, configuration and term): what the kept ones must equal (tests, and a check after a repair)."""
    n = conn.execute(
        "SELECT v.acl_groups, c.ts_config::text, count(*) FROM chunks c JOIN document_versions v ON v.id = c.version_id"
        " WHERE v.status = 'live' AND v.kind = 'content' AND c.purged_at IS NULL GROUP BY 1, 2"
    ).fetchall()
    df = conn.execute(
        "SELECT v.acl_groups, c.ts_config::text, u.lexeme, count(*) FROM chunks c"
        " JOIN document_versions v ON v.id = c.version_id, unnest(c.tsv) u"
        " WHERE v.status = 'live' AND v.kind = 'content' AND c.purged_at IS NULL GROUP BY 1, 2, 3"
    ).fetchall()
    return {(tuple(r[0]), r[1]): int(r[2]) for r in n}, {(tuple(r[0]), r[1], r[2]): int(r[3]) for r in df}


def kept(conn: psycopg.Connection) -> Counts:
    """The statistics as publish keeps them (sets and terms at 0 left out), comparable with `recount`."""
    n = conn.execute("SELECT acl_groups, ts_config::text, chunks FROM fts_acl_corpus WHERE chunks > 0").fetchall()
    df = conn.execute("SELECT acl_groups, ts_config::text, lexeme, df FROM fts_acl_terms WHERE df > 0").fetchall()
    return {(tuple(r[0]), r[1]): int(r[2]) for r in n}, {(tuple(r[0]), r[1], r[2]): int(r[3]) for r in df}


def rebuild(conn: psycopg.Connection) -> None:
    """Count the statistics from scratch from the live chunks (inside the caller's transaction):
    the repair if they were ever doubted (`recount` differs from `kept`), and what a bulk load
    that bypasses publish runs once at its end."""
    conn.execute("DELETE FROM fts_acl_terms")
    conn.execute("DELETE FROM fts_acl_corpus")
    conn.execute(
        "INSERT INTO fts_acl_corpus (acl_groups, ts_config, chunks) SELECT v.acl_groups, c.ts_config, count(*)"
        " FROM chunks c JOIN document_versions v ON v.id = c.version_id"
        " WHERE v.status = 'live' AND v.kind = 'content' AND c.purged_at IS NULL GROUP BY 1, 2"
    )
    conn.execute(
        "INSERT INTO fts_acl_terms (acl_groups, ts_config, lexeme, df, max_weight)"
        " SELECT v.acl_groups, c.ts_config, u.lexeme, count(*),"
        " max(rag_bm25_tf(coalesce(array_length(u.positions, 1), 1), c.token_count))"
        " FROM chunks c JOIN document_versions v ON v.id = c.version_id CROSS JOIN LATERAL unnest(c.tsv) u"
        " WHERE v.status = 'live' AND v.kind = 'content' AND c.purged_at IS NULL GROUP BY 1, 2, 3"
    )
