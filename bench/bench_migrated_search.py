"""Search latency of an index that a model migration switched (issue 21 at issue 26's state): the
new model's vectors of every chunk staged before the switch live in `model_vectors`, and the
chunks staged after it carry it themselves ("native").

On bench_search_scale.py's database of `--chunks` (built there when missing, same generator), a
second synthetic model of the same dimension gets a vector for every chunk in model_vectors and
its HNSW index, as `migrate-model` leaves it right after the switch (no native chunk yet: the
worst case for the native part). Then, as the reader role with a broad caller's groups, each
query runs the vector and hybrid branches under
  chosen   the plan the store picks now (store/vector_plan.py: the native part read exactly when
           the caller sees at most the exact limit of native chunks, here none)
  walked   the same plan with the native part walked as before (the chunks' HNSW index filtered
           to the new model, which runs to hnsw.max_scan_tuples when it carries none)
taking turns on each query, p50 / p95 ms; and recall@10 of each against the exact scan. The
model_vectors rows are left in place for a later run.

    python bench/bench_migrated_search.py --chunks 100000 --queries 20
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_search_scale as scale
import numpy as np
import psycopg

from rag_pipeline import store
from rag_pipeline.store import database, roles
from rag_pipeline.store.search import EXACT, View

NEW_MODEL = {"name": "synthetic-384-new", "revision": "bench", "weights_sha256": "1" * 64,
             "dimension": scale.DIMENSION, "normalized": True, "max_tokens": 256}
GROUPS = ["all-staff"]


def migrate(conn: psycopg.Connection) -> tuple[int, float | None]:
    """The new model's id, and the seconds its vectors took to write (None: already there)."""
    found = conn.execute("SELECT id FROM embedding_models WHERE name = %s", (NEW_MODEL["name"],)).fetchone()
    if found is not None:
        return found[0], None
    started = time.perf_counter()
    model_id = store.models.register_model(conn, NEW_MODEL)
    ids = [r[0] for r in conn.execute("SELECT id FROM chunks ORDER BY id")]
    rng, centres = np.random.default_rng(21), scale.topic_centres(1000)
    with conn.transaction(), conn.cursor() as cur, cur.copy(
            "COPY model_vectors (chunk_id, model_id, embedding) FROM STDIN WITH (FORMAT BINARY)") as copy:
        copy.set_types(["int8", "int4", "vector"])
        for start in range(0, len(ids), 10_000):
            block = ids[start:start + 10_000]
            for chunk_id, vector in zip(block, scale.normalised(rng, len(block), centres), strict=True):
                copy.write_row((chunk_id, model_id, vector))
    conn.execute("SET maintenance_work_mem = '2GB'")
    with conn.transaction():
        conn.execute("SELECT rag_ensure_model_vector_index(%s)", (scale.DIMENSION,))
    conn.execute("VACUUM ANALYZE model_vectors")
    return model_id, time.perf_counter() - started


def run(url: str, model_id: int, claims: list[str], vectors: np.ndarray) -> dict:
    """Milliseconds by (mode, plan) and recall@10 by (mode, plan), as the reader."""
    view = View(model_id=model_id)
    times: dict[str, list[float]] = {}
    found: dict[str, list[list[int]]] = {}
    with database.connect_as(url, roles.READER) as conn:
        for i, (claim, vector) in enumerate(zip(claims, vectors, strict=True)):
            with conn.transaction():
                store.search_log.set_session_groups(conn, GROUPS)
                chosen = store.search.plan_vector(conn, GROUPS, model_id, view)
            plans = {"chosen": chosen, "walked": replace(chosen, native_exact=False), "exact": EXACT}
            for mode in ("vector", "hybrid"):
                order = ["chosen", "walked"] if i % 2 == 0 else ["walked", "chosen"]
                for name in [*order, "exact"]:
                    with conn.transaction():
                        store.search_log.set_session_groups(conn, GROUPS)
                        started = time.perf_counter()
                        hits = store.search.search_chunks(conn, vector, claim, GROUPS, model_id, scale.K, view, mode=mode,
                                                          plan=plans[name], transaction=False, migrated=True)
                        times.setdefault(f"{mode} {name}", []).append((time.perf_counter() - started) * 1000)
                    found.setdefault(f"{mode} {name}", []).append([h["chunk_id"] for h in hits])
    recall = {key: float(np.mean([len(set(got) & set(want)) / max(len(want), 1)
                                  for got, want in zip(lists, found[key.split()[0] + " exact"], strict=True)]))
              for key, lists in found.items() if not key.endswith("exact")}
    return {"plan": chosen.to_dict(), "latency_ms": {k: scale.percentiles(v) for k, v in times.items()},
            "recall_at_10": recall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--pgdata", type=Path, default=Path("/tmp/rag-bench-search/pgdata"))
    args = parser.parse_args()
    server = database.embedded_url(args.pgdata)
    url = scale.scratch_url(server, reset=False, name=f"bench_search_{args.chunks}")
    with database.connect(url) as conn:
        if conn.execute("SELECT count(*) FROM embedding_models WHERE name = 'synthetic-384'").fetchone()[0] == 0:
            raise SystemExit(f"no bench_search_{args.chunks} database yet: run bench_search_scale.py --chunks {args.chunks}")
        model_id, seconds = migrate(conn)
    if seconds is not None:
        print(f"model_vectors written for every chunk: {seconds:.1f} s", flush=True)
    with (scale.SCIFACT / "queries.jsonl").open(encoding="utf-8") as f:
        claims = random.Random(5).sample([json.loads(line)["text"] for line in f], args.queries)
    vectors = scale.normalised(np.random.default_rng(99), args.queries, scale.topic_centres(1000))
    load = os.getloadavg()
    figures = run(url, model_id, claims, vectors)
    figures["load_average"] = [round(x, 2) for x in (*load, *os.getloadavg())]
    print(f"\n{args.chunks:,} chunks, every vector of the new model in model_vectors, {args.queries} queries, reader role,"
          f" groups {GROUPS}; load {figures['load_average']}; plan chosen: {figures['plan']}")
    print("| mode | native part | p50 ms | p95 ms | p99 ms | recall@10 vs exact |")
    print("|---|---|---:|---:|---:|---:|")
    for key, p in figures["latency_ms"].items():
        mode, name = key.split()
        recall = figures["recall_at_10"].get(key)
        print(f"| {mode} | {name} | {p['p50']} | {p['p95']} | {p['p99']} | {'' if recall is None else f'{recall:.3f}'} |")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
