"""Where reading a caller's chunks by version beats walking an index over everyone's (issue 21):
the crossover of both branches' two strategies, by corpus size and by how much the caller sees.

A search reads the caller's visible chunks directly (the vector branch scans them exactly, the
full-text branch matches them by version) when they are few, and otherwise walks an index over
every caller's chunks and filters (HNSW with pgvector's iterative scan; the GIN index of `tsv`).
The walk's cost grows with what it must filter away (a 1% caller's HNSW scan visits about 100
tuples per one it keeps), the direct read's with what the caller sees; so the crossover is not a
fixed count of chunks but grows with the corpus. This bench forces each strategy for callers who
see 1% to 20% of the corpus and prints the milliseconds of each beside the strategy the store
picks, so the rule in store/direct_read.py can be checked against measurement at every size built.

It reuses bench_search_scale's scratch databases (`bench_search_<n>`, built by that bench; the
groups g0..g99 each hold 1% of the versions, so a caller in g0..g<f-1> sees f%), its queries
(SciFact claims) and its stand-in encoder. Timed: `retrieval.search` in `vector` and `fulltext`
mode as the reader role, k = 10; the strategies take turns on each query (the first query of
each configuration is not timed: it plans and warms). Figures only.

    python bench/bench_search_scale.py --chunks 100000            # builds the database once
    python bench/bench_selective_path.py --chunks 100000,1000000 --fractions 1,2,5,10,20
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

import numpy as np
from bench_search_scale import SCIFACT, FixedEncoder, K, normalised, percentiles, scratch_url, topic_centres

from rag_pipeline.retrieval import search as retrieval
from rag_pipeline.store import bm25, database, direct_read, roles, search

# Each forced strategy as the floors that select it at any size: (vector exact rows, full-text by-version chunks).
FORCED = {"by version": (10**9, 10**9), "index": (0, 0)}


STRATEGIES = tuple(FORCED)


def timed(url: str, groups: list[str], claims: list[str], vectors: np.ndarray, mode: str) -> dict[str, list[float]]:
    """Milliseconds per search under each forced strategy, taking turns on each query (which goes
    first alternates), so that neither always runs on caches the other warmed. The store's own
    choice is not timed apart: run after the same strategy on the same query it would find that
    query's pages cached; it costs what the strategy it picks costs."""
    saved = search.EXACT_MAX_ROWS, bm25.BY_VERSION_MAX_CHUNKS
    encoder = FixedEncoder()
    found: dict[str, list[float]] = {label: [] for label in STRATEGIES}
    try:
        with database.connect_as(url, roles.READER) as conn:
            for i, (claim, vector) in enumerate(zip(claims, vectors, strict=True)):
                encoder.vector = vector
                for label in STRATEGIES if i % 2 else reversed(STRATEGIES):
                    search.EXACT_MAX_ROWS, bm25.BY_VERSION_MAX_CHUNKS = FORCED[label]
                    started = time.perf_counter()
                    retrieval.search(conn, encoder, claim, groups, k=K, mode=mode, log=False)
                    if i > 0:  # the first query of each strategy plans and warms its statements
                        found[label].append((time.perf_counter() - started) * 1000)
            return found
    finally:
        search.EXACT_MAX_ROWS, bm25.BY_VERSION_MAX_CHUNKS = saved


def _rule_limit(mode: str, url: str) -> int:
    """The visible chunks up to which the store reads by version at this corpus (its statistics)."""
    with database.connect(url) as conn:
        corpus = direct_read.corpus_chunks(conn)
    floor = search.EXACT_MAX_ROWS if mode == "vector" else bm25.BY_VERSION_MAX_CHUNKS
    return direct_read.limit(floor, corpus, mode)


def run_size(server: str, chunks: int, fractions: list[int], claims: list[str], vectors: np.ndarray) -> dict:
    url = scratch_url(server, reset=False, name=f"bench_search_{chunks}")
    figures: dict = {"chunks": chunks, "load_before": [round(x, 2) for x in os.getloadavg()], "rows": []}
    for fraction in fractions:
        groups = [f"g{i}" for i in range(fraction)]
        visible = chunks * fraction // 100
        for mode in ("vector", "fulltext"):
            row = {"fraction": fraction, "visible": visible, "mode": mode,
                   "picks": "by version" if visible <= _rule_limit(mode, url) else "index"}
            for label, ms in timed(url, groups, claims, vectors, mode).items():
                row[label] = percentiles(ms)
            figures["rows"].append(row)
            print(f"  {chunks:,} {fraction}% {mode}: " + "  ".join(
                f"{label} {row[label]['p50']}/{row[label]['p95']}" for label in STRATEGIES), flush=True)
    figures["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return figures


def report(r: dict, queries: int) -> None:
    print(f"\n{r['chunks']:,} live chunks, {queries} queries, k={K}, reader role; load {r['load_before']} -> {r['load_after']}")
    print("| caller sees | visible chunks | branch | by version p50 / p95 ms | index p50 / p95 ms | faster (p95) | rule picks |")
    print("|---:|---:|---|---:|---:|---|---|")
    for row in r["rows"]:
        cells = [f"{row[k]['p50']} / {row[k]['p95']}" for k in STRATEGIES]
        faster = min(STRATEGIES, key=lambda k: row[k]["p95"])
        print(f"| {row['fraction']}% | {row['visible']:,} | {row['mode']} | {cells[0]} | {cells[1]} | {faster} | {row['picks']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", default="100000", help="comma-separated sizes whose scratch databases exist")
    parser.add_argument("--fractions", default="1,2,5,10,20", help="percent of the corpus the caller sees")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7, help="draws the claims and query vectors (another seed: new queries)")
    parser.add_argument("--pgdata", type=Path, default=Path("/tmp/rag-bench-search/pgdata"))
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as f:
        claims = random.Random(args.seed).sample([json.loads(line)["text"] for line in f], args.queries)
    vectors = normalised(np.random.default_rng(args.seed * 11), args.queries, topic_centres(1000))
    server = database.embedded_url(args.pgdata)
    results = []
    for n in args.chunks.split(","):
        results.append(run_size(server, int(n), [int(f) for f in args.fractions.split(",")], claims, vectors))
        report(results[-1], args.queries)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
