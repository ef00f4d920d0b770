"""Vector search at scale: recall@10 against exact search and latency of the project's own search
SQL (`store.search.plan_vector` + `search_chunks`, vector mode) over synthetic chunks.

Builds a scratch database `bench_search_scale` on an embedded PostgreSQL (default
/tmp/rag-bench-search, its own server) with `--chunks` random normalised 384-d vectors loaded by
COPY, `--per-version` chunks per document version. Every version carries the group `all-staff`
(a caller in it sees everything: the unfiltered case) and one of `--groups` groups `g<n>`, so a
caller in `g0` passes 1/`--groups` of the chunks (1% by default). The HNSW index is built after
the load by the store's own `rag_ensure_vector_index` (pgvector defaults m=16, ef_construction=64).

Modes, each over the same random queries:
  unfiltered/index    all-staff: the strategy the store chooses (the index)
  unfiltered/exact    all-staff, exact scan: the reference for recall, and the latency baseline
  1%/chosen           g0: the strategy the store chooses for that filter
  1%/exact            g0, exact scan: the reference for the filtered recall
  1%/hnsw-plain       g0, the index without iterative scan (ef_search 40): what plain HNSW returns
  1%/hnsw-iterative   g0, the index with the store's iterative-scan settings, forced

Prints a table and JSON: recall@10 against the exact mode of the same filter, rows returned per
query, p50/p95 latency, and p95 ratios against unfiltered/index. Figures only, no assertions.

    python bench/bench_search_scale.py                       # 200,000 chunks
    python bench/bench_search_scale.py --chunks 20000 --queries 30
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from rag_pipeline import store
from rag_pipeline.store import database

DIMENSION = 384
SCRATCH = "bench_search_scale"
RUN = "bench-run"
K = 10
SPREAD = 0.8  # noise around a topic centre, as a share of the centre's length


def scratch_url(server_url: str, reset: bool, name: str = SCRATCH) -> str:
    """The scratch database `name` on the embedded server, created (and migrated) when missing
    (also bench_reader_cost's)."""
    with psycopg.connect(server_url, autocommit=True) as admin:
        if reset:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            admin.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(server_url)
    params["dbname"] = name
    url = make_conninfo(**params)
    with database.connect(url) as conn:
        store.migrations.migrate(conn)
    return url


def normalised(rng: np.random.Generator, n: int, centres: np.ndarray | None) -> np.ndarray:
    """Random unit vectors: around random centres (`centres` given), or uniform on the sphere."""
    vectors = rng.standard_normal((n, DIMENSION), dtype=np.float32)
    if centres is not None:
        vectors = centres[rng.integers(0, len(centres), n)] + SPREAD / np.sqrt(DIMENSION) * vectors
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def topic_centres(count: int) -> np.ndarray | None:
    """Unit centres of the synthetic topics (None: uniform vectors). Fixed seed: the queries of
    a later run share the loaded chunks' topics."""
    if count == 0:
        return None
    centres = np.random.default_rng(7).standard_normal((count, DIMENSION), dtype=np.float32)
    return centres / np.linalg.norm(centres, axis=1, keepdims=True)


def load(conn: psycopg.Connection, chunks: int, per_version: int, groups: int, centres: np.ndarray | None,
         seed: int) -> dict[str, float]:
    """COPY the synthetic index, then build the HNSW index in one pass. Returns timings."""
    timings: dict[str, float] = {}
    model_id = store.models.register_model(conn, {"name": "synthetic-384", "revision": "bench", "weights_sha256": "0" * 64,
                                                  "dimension": DIMENSION, "normalized": True, "max_tokens": 256})
    conn.execute(f"DROP INDEX IF EXISTS chunks_embedding_hnsw_{DIMENSION}")  # rebuilt after the load, in one pass
    versions = -(-chunks // per_version)
    started = time.perf_counter()
    with conn.transaction():
        conn.execute("INSERT INTO runs (run_id, sources, status, model_id) VALUES (%s, '{bench}', 'published', %s)",
                     (RUN, model_id))
        conn.execute("INSERT INTO documents (id, source, uri) SELECT i, 'bench', 'doc-' || i FROM generate_series(1, %s) i",
                     (versions,))
        conn.execute(
            "INSERT INTO document_versions (id, document_id, version_no, kind, status, checksum, acl_groups, model_id,"
            " run_id, valid_from) SELECT i, i, 1, 'content', 'live', 'c' || i, ARRAY['all-staff', 'g' || (i %% %s)],"
            " %s, %s, now() - interval '1 day' FROM generate_series(1, %s) i",
            (groups, model_id, RUN, versions),
        )
        conn.execute("CREATE TEMP TABLE staged (id bigint, embedding vector) ON COMMIT DROP")
        rng = np.random.default_rng(seed)
        with conn.cursor() as cur, cur.copy("COPY staged (id, embedding) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["int8", "vector"])
            for start in range(0, chunks, 10_000):
                block = normalised(rng, min(10_000, chunks - start), centres)
                for offset, vector in enumerate(block):
                    copy.write_row((start + offset, vector))
        conn.execute(
            "INSERT INTO chunks (id, version_id, ord, char_start, char_end, token_count, content_hash, text, model_id,"
            " embedding, tsv) SELECT id + 1, id / %s + 1, id %% %s, 0, 1, 1, 'h' || id, 'x', %s, embedding, ''::tsvector"
            " FROM staged",
            (per_version, per_version, model_id),
        )
    timings["copy_s"] = time.perf_counter() - started
    started = time.perf_counter()
    conn.execute("SET maintenance_work_mem = '2GB'")
    with conn.transaction():
        store.models.ensure_vector_index(conn, DIMENSION)
    timings["hnsw_build_s"] = time.perf_counter() - started
    conn.execute("ANALYZE chunks")
    conn.execute("ANALYZE document_versions")
    return timings


def loaded_chunks(conn: psycopg.Connection) -> int:
    return conn.execute("SELECT count(*) FROM chunks").fetchone()[0]


def model_id_of(conn: psycopg.Connection) -> int:
    return conn.execute("SELECT id FROM embedding_models WHERE name = 'synthetic-384'").fetchone()[0]


def run_mode(conn: psycopg.Connection, model_id: int, queries: np.ndarray, groups: list[str],
             plan_for: Callable[[psycopg.Connection], store.search.VectorPlan]) -> tuple[list[list[int]], list[float], list[dict]]:
    """Top-k ids, latency (plan + search) and plan record per query."""
    found, times, plans = [], [], []
    for vector in queries:
        started = time.perf_counter()
        plan = plan_for(conn)
        rows = store.search.search_chunks(conn, vector, "", groups, model_id, K, plan=plan, mode="vector")
        times.append(time.perf_counter() - started)
        found.append([r["chunk_id"] for r in rows])
        plans.append(plan.to_dict())
    return found, times, plans


def recall(found: list[list[int]], truth: list[list[int]]) -> float:
    hits = sum(len(set(f) & set(t)) for f, t in zip(found, truth, strict=True))
    return hits / max(1, sum(len(t) for t in truth))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=200_000)
    parser.add_argument("--per-version", type=int, default=20)
    parser.add_argument("--groups", type=int, default=100, help="a caller in g0 passes 1/GROUPS of the chunks")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--topics", type=int, default=1000,
                        help="chunks and queries lie around this many random topic centres; 0 = uniform on the sphere")
    parser.add_argument("--pgdata", type=Path, default=Path("/tmp/rag-bench-search/pgdata"))
    parser.add_argument("--reload", action="store_true", help="rebuild the scratch database even if it holds --chunks")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    load_avg = os.getloadavg()
    url = scratch_url(database.embedded_url(args.pgdata), reset=False)
    timings: dict[str, float] = {}
    with database.connect(url) as conn:
        if args.reload or loaded_chunks(conn) != args.chunks:  # --reload after changing --topics
            conn.close()
            url = scratch_url(database.embedded_url(args.pgdata), reset=True)
            conn = database.connect(url)
            timings = load(conn, args.chunks, args.per_version, args.groups, topic_centres(args.topics), seed=12)
            print(f"loaded {args.chunks:,} chunks: COPY {timings['copy_s']:.1f} s, HNSW build {timings['hnsw_build_s']:.1f} s",
                  flush=True)
        model_id = model_id_of(conn)
        queries = normalised(np.random.default_rng(99), args.queries, topic_centres(args.topics))
        index_plan = store.search.plan_vector(conn, ["all-staff"], model_id)
        forced = store.search.VectorPlan("index", -1, DIMENSION, store.search.EXACT_MAX_ROWS, f"chunks_embedding_hnsw_{DIMENSION}",
                                         store.search.EF_SEARCH, store.search.MAX_SCAN_TUPLES)
        plain = store.search.VectorPlan("index", -1, DIMENSION, store.search.EXACT_MAX_ROWS, f"chunks_embedding_hnsw_{DIMENSION}", 40, 20_000, "off")
        chosen = lambda groups: lambda c: store.search.plan_vector(c, groups, model_id)  # noqa: E731
        fixed = lambda plan: lambda c: plan  # noqa: E731
        lower_ef = {ef: store.search.VectorPlan("index", -1, DIMENSION, store.search.EXACT_MAX_ROWS, f"chunks_embedding_hnsw_{DIMENSION}", ef,
                                                store.search.MAX_SCAN_TUPLES) for ef in (40, 100)}
        modes = {
            "unfiltered/index": (["all-staff"], chosen(["all-staff"]), "unfiltered/exact"),
            "unfiltered/ef100": (["all-staff"], fixed(lower_ef[100]), "unfiltered/exact"),
            "unfiltered/ef40": (["all-staff"], fixed(lower_ef[40]), "unfiltered/exact"),
            "unfiltered/exact": (["all-staff"], fixed(store.search.EXACT), "unfiltered/exact"),
            "1%/chosen": (["g0"], chosen(["g0"]), "1%/exact"),
            "1%/exact": (["g0"], fixed(store.search.EXACT), "1%/exact"),
            "1%/hnsw-plain": (["g0"], fixed(plain), "1%/exact"),
            "1%/hnsw-iterative": (["g0"], fixed(forced), "1%/exact"),
        }
        store.search.search_chunks(conn, queries[0], "", ["all-staff"], model_id, K, plan=index_plan, mode="vector")  # warm
        explain = explain_vector(conn, queries[0], model_id, index_plan)
        results: dict[str, dict] = {}
        for name, (groups, plan_for, _) in modes.items():
            found, times, plans = run_mode(conn, model_id, queries, groups, plan_for)
            results[name] = {"found": found, "times": times, "strategy": plans[0]["strategy"],
                             "estimate": plans[0]["estimate"], "estimate_capped": plans[0]["estimate_capped"]}
            print(f"  {name}: done", flush=True)
        filtered_rows = store.search.plan_vector(conn, ["g0"], model_id).estimate
    base_p95 = float(np.percentile(results["unfiltered/index"]["times"], 95))
    table = []
    for name, (_, _, truth) in modes.items():
        r = results[name]
        p50, p95 = (float(np.percentile(r["times"], q)) * 1000 for q in (50, 95))
        table.append({"mode": name, "strategy": r["strategy"], "estimate": r["estimate"],
                      "recall_at_10": round(recall(r["found"], results[truth]["found"]), 4),
                      "rows_per_query": round(float(np.mean([len(f) for f in r["found"]])), 2),
                      "p50_ms": round(p50, 2), "p95_ms": round(p95, 2), "p95_vs_unfiltered_index": round(p95 / 1000 / base_p95, 2)})
    summary = {"chunks": args.chunks, "topics": args.topics, "spread": SPREAD, "filtered_rows": filtered_rows, "filtered_share": filtered_rows / args.chunks,
               "queries": args.queries, "k": K, "exact_max_rows": store.search.EXACT_MAX_ROWS,
               "ef_search": store.search.EF_SEARCH, "max_scan_tuples": store.search.MAX_SCAN_TUPLES,
               "index_used_unfiltered": f"chunks_embedding_hnsw_{DIMENSION}" in explain,
               "load_avg_start": [round(x, 2) for x in load_avg], "load_avg_end": [round(x, 2) for x in os.getloadavg()],
               **{k: round(v, 1) for k, v in timings.items()}, "modes": table}
    print(f"\n{args.chunks:,} chunks, {filtered_rows:,} ({filtered_rows / args.chunks:.2%}) pass the filter g0, "
          f"{args.queries} queries, k={K}; the unfiltered query's plan uses the HNSW index: {summary['index_used_unfiltered']}")
    print(f"{'mode':<20} {'strategy':<8} {'recall@10':>9} {'rows':>5} {'p50 ms':>8} {'p95 ms':>8} {'p95/unfiltered':>14}")
    for row in table:
        print(f"{row['mode']:<20} {row['strategy']:<8} {row['recall_at_10']:>9.4f} {row['rows_per_query']:>5.1f} "
              f"{row['p50_ms']:>8.2f} {row['p95_ms']:>8.2f} {row['p95_vs_unfiltered_index']:>14.2f}")
    print(f"load average {summary['load_avg_start']} -> {summary['load_avg_end']}")
    print(json.dumps(summary))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


def explain_vector(conn: psycopg.Connection, vector: np.ndarray, model_id: int, plan: store.search.VectorPlan) -> str:
    """The plan PostgreSQL picks for the search under `plan` (text)."""
    return store.search.explain_search(conn, vector, "", ["all-staff"], model_id, K, plan=plan, mode="vector")


if __name__ == "__main__":
    main()
