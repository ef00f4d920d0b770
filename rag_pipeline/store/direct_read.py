"""When a search reads the caller's own chunks rather than walk an index over everyone's.

Both branches of a search have two strategies. The direct read takes the chunks the caller may
see, version by version (the vector branch scans them exactly, the full-text branch matches each
against the query); its cost grows with what the caller sees. The index walk goes through an
index over every caller's chunks (HNSW with pgvector's iterative scan; the GIN index of `tsv`)
and drops what the caller may not see; its cost grows with what it must drop: a caller who sees
1% of a million chunks makes the HNSW walk visit about a hundred tuples per one it keeps, and
the full-text branch match every caller's postings of the query's terms.

So the number of visible chunks below which the direct read wins is not fixed: it grows with the
corpus. The floors (store/search.py's EXACT_MAX_ROWS, store/bm25.py's BY_VERSION_MAX_CHUNKS) hold
up to REFERENCE_CHUNKS; above that size a branch's limit grows as (corpus / reference) to the
branch's EXPONENT. For the vector branch the square root follows from the costs: the walk keeps a
fixed ef_search rows and visits corpus / visible tuples per row kept, the direct read visits the
visible rows, so the two meet where visible^2 ~ corpus. For full text it is measured: the
strategies met near 10,000 visible chunks at 100,000 and near 30,000 at 1,000,000
(bench/bench_selective_path.py, whose tables bench/README.md keeps), about the square root too.
Below the reference the floors hold: a small index is fast either way.

The corpus size is PostgreSQL's own estimate of the chunks table (pg_class.reltuples, kept by
autovacuum and ANALYZE; every chunk, history included, as the index walks hold them): reading it
costs nothing and needs no privilege, and an estimate is all a choice of strategy needs (both
strategies return the same chunks; only the time differs)."""

from __future__ import annotations

import psycopg

REFERENCE_CHUNKS = 100_000  # the corpus size the floors were measured at
EXPONENT = {"vector": 0.5, "fulltext": 0.5}
# The estimate as a scalar subquery (-1 before the table's first ANALYZE: then the floors hold).
CORPUS_CHUNKS_SQL = "(SELECT greatest(reltuples, 0)::float8 FROM pg_class WHERE oid = 'chunks'::regclass)"


def limit(floor: int, corpus_chunks: float, branch: str) -> int:
    """The visible chunks up to which `branch` ("vector" or "fulltext") reads them directly in a
    corpus of `corpus_chunks`: the floor up to REFERENCE_CHUNKS, then growing (module docstring)."""
    growth = max(1.0, float(corpus_chunks) / REFERENCE_CHUNKS) ** EXPONENT[branch]
    return int(floor * growth)


def limit_sql(floor_param: str, branch: str) -> str:
    """`limit` as SQL over CORPUS_CHUNKS_SQL, for a count that must stop at it in the statement
    that reads the estimate (`floor_param`: a placeholder such as %(floor)s)."""
    return (f"floor({floor_param} * power(greatest(1.0, {CORPUS_CHUNKS_SQL} / {REFERENCE_CHUNKS}),"
            f" {EXPONENT[branch]}))::bigint")


def corpus_chunks(conn: psycopg.Connection) -> float:
    """The estimate alone (searches that did not prepare read it here)."""
    return float(conn.execute(f"SELECT {CORPUS_CHUNKS_SQL}").fetchone()[0] or 0)
