"""What a GIN pending list left by a sync costs every search after it, and what merging it saves
(migration 037, store/index_upkeep.py; issue 21).

On bench_search_scale.py's scratch database of `--chunks` live chunks (built by that bench when
missing; same embedded server, `--pgdata`), for each size in `--written`: a writer inserts that
many chunks (copies of live chunks under their own versions, new ids) in a transaction it keeps
open, as a sync's stage step writes them, so their lexemes wait in the pending lists of the GIN
indexes. The same searches are then timed with the pending lists as the writer left them and
again after `rag_flush_pending_lists()` merged them, the writer's rows in the heap either way (so
the difference is the pending list alone); the writer then rolls back and the table is vacuumed,
leaving the database as it was. The inserted rows are never committed, so no search returns them.

Searches: `retrieval.search` as the reader role, k = 10, the first `--queries` SciFact claims of
bench_search_scale (its stand-in encoder: the query embedding is left out), full text and hybrid +
rerank, for the callers `all` (every chunk) and `50%`. Figures only, no assertions.

    python bench/bench_pending_lists.py                       # 100,000 chunks; 3,000 and 9,000 written
    python bench/bench_pending_lists.py --written 9000 --queries 40
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_search_scale as scale
import numpy as np

from rag_pipeline.retrieval import search as retrieval
from rag_pipeline.store import database, roles

CALLERS = {"all": ["all-staff"], "50%": ["h0"]}
MODES = ("fulltext", "hybrid+rerank")
ID_OFFSET, ORD_OFFSET = 10**12, 10**6  # the writer's copies: ids and positions no real chunk has


def write_uncommitted(conn, count: int) -> float:
    """Insert `count` copies of live chunks in the open transaction of `conn`; seconds taken."""
    columns = [r[0] for r in conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'chunks'"
        " AND is_generated = 'NEVER' ORDER BY ordinal_position")]
    copied = ", ".join(f"id + {ID_OFFSET}" if c == "id" else f"ord + {ORD_OFFSET}" if c == "ord" else c
                       for c in columns)
    started = time.perf_counter()
    conn.execute(f"INSERT INTO chunks ({', '.join(columns)}) SELECT {copied} FROM chunks"  # noqa: S608 -- column names from the catalogue
                 " WHERE id < %s ORDER BY id DESC LIMIT %s", (ID_OFFSET, count))
    return time.perf_counter() - started


def timed(url: str, claims: list[str], vectors: np.ndarray) -> dict[str, dict[str, list[float]]]:
    """Milliseconds per search by caller and mode, as the reader."""
    encoder = scale.FixedEncoder()
    out: dict[str, dict[str, list[float]]] = {}
    with database.connect_as(url, roles.READER) as conn:
        for label, groups in CALLERS.items():
            for mode in MODES:
                encoder.vector = vectors[0]
                retrieval.search(conn, encoder, claims[0], groups, k=scale.K, mode=mode)  # plans warm
                found = out.setdefault(label, {}).setdefault(mode, [])
                for claim, vector in zip(claims, vectors, strict=True):
                    encoder.vector = vector
                    started = time.perf_counter()
                    retrieval.search(conn, encoder, claim, groups, k=scale.K, mode=mode)
                    found.append((time.perf_counter() - started) * 1000)
    return out


def one_size(url: str, written: int, claims: list[str], vectors: np.ndarray) -> dict:
    with database.connect(url) as writer, database.connect(url) as owner:
        owner.execute("SELECT rag_flush_pending_lists()")  # start from merged lists
        writer.autocommit = False
        seconds = write_uncommitted(writer, written)
        timed(url, claims, vectors)  # the written pages into the cache, for both arms alike
        pending = timed(url, claims, vectors)
        started = time.perf_counter()
        pages = owner.execute("SELECT rag_flush_pending_lists()").fetchone()[0]
        merge_s = time.perf_counter() - started
        merged = timed(url, claims, vectors)
        writer.rollback()
    with database.connect(url) as owner:
        owner.execute("VACUUM chunks")
    return {"written": written, "insert_s": round(seconds, 2), "pending_pages": pages, "merge_s": round(merge_s, 3),
            "pending": {c: {m: scale.percentiles(v) for m, v in ms.items()} for c, ms in pending.items()},
            "merged": {c: {m: scale.percentiles(v) for m, v in ms.items()} for c, ms in merged.items()}}


def report(r: dict) -> None:
    print(f"\n{r['written']:,} chunks written: {r['pending_pages']} pending pages, merged in {r['merge_s']} s"
          f" (insert {r['insert_s']} s)")
    print("| caller | mode | pending p50 / p95 ms | merged p50 / p95 ms | p50 ratio |")
    print("|---|---|---:|---:|---:|")
    for caller, modes in r["pending"].items():
        for mode, p in modes.items():
            m = r["merged"][caller][mode]
            print(f"| {caller} | {mode} | {p['p50']} / {p['p95']} | {m['p50']} / {m['p95']} |"
                  f" {m['p50'] / p['p50']:.2f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=100_000, help="live chunks of bench_search_scale's database")
    parser.add_argument("--written", default="3000,9000", help="comma-separated chunks a writer leaves pending")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--pgdata", type=Path, default=Path("/tmp/rag-bench-search/pgdata"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    server = database.embedded_url(args.pgdata)
    url = scale.scratch_url(server, reset=False, name=f"bench_search_{args.chunks}")
    with database.connect(url) as conn:
        live = conn.execute("SELECT count(*) FROM chunks c JOIN document_versions v ON v.id = c.version_id"
                            " WHERE v.status = 'live'").fetchone()[0]
    if live != args.chunks:
        sys.exit(f"{url} holds {live:,} live chunks: build it first with bench_search_scale.py --chunks {args.chunks}")
    with (scale.SCIFACT / "queries.jsonl").open(encoding="utf-8") as f:
        claims = random.Random(5).sample([json.loads(line)["text"] for line in f], args.queries)
    vectors = scale.normalised(np.random.default_rng(99), args.queries, scale.topic_centres(1000))
    load = os.getloadavg()
    results = [one_size(url, int(n), claims, vectors) for n in args.written.split(",")]
    for r in results:
        report(r)
    print(f"\n{args.chunks:,} live chunks, {args.queries} queries, reader role; load {[round(x, 2) for x in load]}"
          f" -> {[round(x, 2) for x in os.getloadavg()]}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
