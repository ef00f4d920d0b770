"""Full-text search at scale (issue 21, item 1): the old BM25-in-SQL branch (idf counted per query
over the visible rows, every matching chunk's tsvector unnested) against the new one (statistics
kept at publish, weights as sparsevec, MaxScore-bounded candidates: store/bm25.py), in one run
over the same index, with recall@10 of the new branch against exact BM25 on the same statistics.

Generator: each synthetic chunk is 3-6 sentences drawn at random from the 5,183 BEIR SciFact
abstracts of the shared corpus (real vocabulary and term frequencies; the token count is the word
count), vectors are cheap random unit vectors of dimension 384 (the full-text branch never reads
them). `--per-version` chunks per document version, staged through the store's own
`stage_content_version` (COPY, terms, weights) and published by `publish` (statistics): the build
time is that path's. Every version is in group `all-staff`, in one of 100 groups `g<n>` (a caller
in g0 passes 1%) and in one of 2 groups `h<n>` (h0 passes 50%). Queries: SciFact's claims.

Rows: `old` the previous SQL (all-staff only: it is the slow one), `new` store.search.search_chunks
in fulltext mode for each filter, `exact` the new statistics without a row budget (the recall
reference). Superuser connection (row-level security is item 2). Figures only, no assertions.

    python bench/bench_fulltext_scale.py --chunks 10000 --queries 40
    python bench/bench_fulltext_scale.py --chunks 100000 --queries 40 --old-queries 15
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from rag_pipeline import store
from rag_pipeline.store import bm25, database
from rag_pipeline.store.text_search import or_query

SCIFACT = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "qa" / "scifact_beir"
K = 10
DEPTH = 50  # the candidate depth of a search (store.search.CANDIDATES)

# The full-text branch as it was before (commit 68f6be1), ranked alone.
OLD_SQL = """
WITH terms AS (
    SELECT t.cfg, t.lexeme, t.q
    FROM unnest(%(t_cfg)s::regconfig[], %(t_lex)s::text[], %(t_q)s::tsquery[]) AS t(cfg, lexeme, q)
), corpus AS (
    SELECT count(*) AS n, coalesce(avg(c.token_count), 1) AS avgdl
    FROM chunks c JOIN document_versions v ON v.id = c.version_id WHERE {where}
), idf AS (
    SELECT t.cfg, t.lexeme, t.q, ln(1 + (corpus.n - d.df + 0.5) / (d.df + 0.5)) AS idf
    FROM terms t CROSS JOIN corpus, LATERAL (
        SELECT count(*) AS df FROM chunks c JOIN document_versions v ON v.id = c.version_id
        WHERE {where} AND c.ts_config = t.cfg AND c.tsv @@ t.q) d
), matched AS (
    SELECT c.id, c.ts_config, c.tsv, c.token_count
    FROM chunks c JOIN document_versions v ON v.id = c.version_id
    JOIN unnest(%(q_cfg)s::regconfig[], %(q_or)s::tsquery[]) AS oq(cfg, q)
      ON c.ts_config = oq.cfg AND c.tsv @@ oq.q
    WHERE {where}
), scored AS (
    SELECT m.id, sum(i.idf * (u.tf * (%(k1)s + 1))
           / (u.tf + %(k1)s * (1 - %(b)s + %(b)s * m.token_count / corpus.avgdl))) AS score
    FROM matched m CROSS JOIN corpus
    CROSS JOIN LATERAL (SELECT x.lexeme, coalesce(array_length(x.positions, 1), 1) AS tf FROM unnest(m.tsv) x) u
    JOIN idf i ON i.cfg = m.ts_config AND i.lexeme = u.lexeme
    GROUP BY m.id
)
SELECT id, score FROM scored ORDER BY score DESC, id LIMIT %(cand)s
"""


def sentences() -> list[str]:
    found = []
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            found += [s.strip() for s in re.split(r"(?<=[.!?])\s+", doc["title"] + ". " + doc["text"]) if len(s) > 20]
    return found


def scratch_url(server_url: str, name: str, reset: bool) -> tuple[str, bool]:
    with psycopg.connect(server_url, autocommit=True) as admin:
        if reset:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        fresh = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None
        if fresh:
            admin.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(server_url)
    params["dbname"] = name
    url = make_conninfo(**params)
    with database.connect(url) as conn:
        store.migrations.migrate(conn)
    return url, fresh


def build(conn: psycopg.Connection, chunks: int, per_version: int, seed: int) -> dict[str, float]:
    """Stage and publish the synthetic index through the store; returns timings and sizes."""
    pool = sentences()
    rng, rnd = np.random.default_rng(seed), random.Random(seed)
    model_id = store.models.register_model(conn, {"name": "synthetic-384", "revision": "bench", "weights_sha256": "0" * 64,
                                                  "dimension": 384, "normalized": True, "max_tokens": 256})
    store.runs.create_run(conn, "build", ["bench"], model_id)
    started = time.perf_counter()
    for n in range(-(-chunks // per_version)):
        rows = []
        for i in range(min(per_version, chunks - n * per_version)):
            text = " ".join(rnd.choices(pool, k=rnd.randint(3, 6)))
            rows.append({"ord": i, "section_path": [], "char_start": 0, "char_end": len(text),
                         "token_count": len(text.split()), "content_hash": f"{n}-{i}", "text": text, "search_text": text})
        vectors = rng.standard_normal((len(rows), 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        fields = {"checksum": str(n), "acl_groups": ["all-staff", f"g{n % 100}", f"h{n % 2}"], "model_id": model_id,
                  "language": "en"}
        store.versions.stage_content_version(conn, "build", "bench", f"doc-{n}", fields, rows, vectors)
    staged = time.perf_counter() - started
    started = time.perf_counter()
    store.versions.publish(conn, "build")
    published = time.perf_counter() - started
    conn.execute("ANALYZE")
    return {"stage_s": staged, "publish_s": published}


def sizes(conn: psycopg.Connection) -> dict[str, float]:
    n = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    bm25_bytes = conn.execute("SELECT coalesce(sum(pg_column_size(bm25)), 0) FROM chunks").fetchone()[0]
    terms = conn.execute("SELECT pg_total_relation_size('fts_terms'), count(*) FROM fts_terms").fetchone()
    gin = conn.execute("SELECT pg_relation_size('chunks_tsv')").fetchone()[0]
    tsv = conn.execute("SELECT sum(pg_column_size(tsv)) FROM chunks").fetchone()[0]
    return {"chunks": n, "bm25_bytes_per_chunk": bm25_bytes / n, "terms": terms[1],
            "fts_terms_bytes_per_chunk": terms[0] / n, "gin_bytes_per_chunk": gin / n, "tsv_bytes_per_chunk": tsv / n}


def old_search(conn: psycopg.Connection, query: str, groups: list[str], model_id: int) -> list[int]:
    view = store.search.View()
    configs = store.search.index_ts_configs(conn)
    terms = conn.execute("SELECT DISTINCT cfg::text, t.lexeme FROM unnest(%s::regconfig[]) cfg,"
                         " unnest(to_tsvector(cfg, %s)) t ORDER BY 1, 2", (configs, query)).fetchall()
    by_config: dict[str, list[str]] = {}
    for cfg, lexeme in terms:
        by_config.setdefault(cfg, []).append(lexeme)
    params = {**store.search._filter_params(groups, model_id, view), "t_cfg": [c for c, _ in terms],
              "t_lex": [lx for _, lx in terms], "t_q": [or_query([lx]) for _, lx in terms], "q_cfg": list(by_config),
              "q_or": [or_query(v) for v in by_config.values()], "k1": bm25.BM25_K1, "b": bm25.BM25_B, "cand": DEPTH}
    sql = OLD_SQL.format(where=store.search._where(view))
    return [r[0] for r in conn.execute(sql, params, prepare=False).fetchall()]


def new_search(conn: psycopg.Connection, query: str, groups: list[str], model_id: int) -> tuple[list[int], dict]:
    vector = np.ones(384, dtype=np.float32) / np.sqrt(384)
    rows = store.search.search_chunks(conn, vector, query, groups, model_id, DEPTH, candidates=DEPTH, mode="fulltext")
    return [r["chunk_id"] for r in rows], (rows[0]["fulltext_plan"] if rows else {})


def exact_search(conn: psycopg.Connection, query: str, groups: list[str], model_id: int) -> list[int]:
    view = store.search.View()
    terms, _ = bm25.query_terms(conn, query, store.search.index_ts_configs(conn))
    params = store.search._filter_params(groups, model_id, view)
    return bm25.rank(conn, terms, store.search._where(view), params, DEPTH, budget=None).ids


def timed(fn, *args) -> tuple[float, object]:
    started = time.perf_counter()
    out = fn(*args)
    return (time.perf_counter() - started) * 1000, out


def percentiles(ms: list[float]) -> dict[str, float]:
    a = np.array(ms)
    return {"p50": float(np.percentile(a, 50)), "p95": float(np.percentile(a, 95)), "p99": float(np.percentile(a, 99)),
            "n": len(ms)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--per-version", type=int, default=10)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--old-queries", type=int, default=20, help="queries run through the old SQL (slow)")
    parser.add_argument("--pgdata", type=Path, default=Path("/tmp/rag-bench-fulltext/pgdata"))
    parser.add_argument("--reset", action="store_true")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()

    url, fresh = scratch_url(database.embedded_url(args.pgdata), f"bench_fulltext_{args.chunks}", args.reset)
    figures: dict = {"chunks": args.chunks}
    with database.connect(url) as conn:
        if fresh or conn.execute("SELECT count(*) FROM chunks").fetchone()[0] == 0:
            figures["build"] = build(conn, args.chunks, args.per_version, args.seed)
            figures["build"]["ms_per_chunk"] = (figures["build"]["stage_s"] + figures["build"]["publish_s"]) * 1000 / args.chunks
        figures["sizes"] = sizes(conn)
        model_id = conn.execute("SELECT id FROM embedding_models WHERE name = 'synthetic-384'").fetchone()[0]
        with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as f:
            claims = [json.loads(line)["text"] for line in f]
        queries = random.Random(args.seed).sample(claims, args.queries)
        for q in queries[:3]:  # warm the caches and plans
            new_search(conn, q, ["all-staff"], model_id)
        rows: dict[str, list[float]] = {}
        recall: dict[str, list[float]] = {}
        exact_share: dict[str, list[bool]] = {}
        matched: dict[str, list[int]] = {}
        tries: dict[str, list[int]] = {}
        for label, groups in (("all", ["all-staff"]), ("50%", ["h0"]), ("1%", ["g0"])):
            for i, q in enumerate(queries):
                ms, (ids, plan) = timed(new_search, conn, q, groups, model_id)
                rows.setdefault(f"new/{label}", []).append(ms)
                ms_exact, reference = timed(exact_search, conn, q, groups, model_id)
                rows.setdefault(f"exact/{label}", []).append(ms_exact)
                top = set(reference[:K])
                recall.setdefault(f"new/{label}", []).append(len(set(ids[:K]) & top) / len(top) if top else 1.0)
                exact_share.setdefault(f"new/{label}", []).append(bool(plan.get("exact", True)))
                matched.setdefault(f"new/{label}", []).append(int(plan.get("matched", 0)))
                tries.setdefault(f"new/{label}", []).append(int(plan.get("tries", 0)))
                if label == "all" and i < args.old_queries:
                    ms_old, old_ids = timed(old_search, conn, q, groups, model_id)
                    rows.setdefault("old/all", []).append(ms_old)
                    recall.setdefault("old/all", []).append(len(set(old_ids[:K]) & top) / len(top) if top else 1.0)
        figures["latency_ms"] = {m: percentiles(v) for m, v in rows.items()}
        figures["recall@10_vs_exact"] = {m: float(np.mean(v)) for m, v in recall.items()}
        figures["proven_exact_share"] = {m: float(np.mean(v)) for m, v in exact_share.items()}
        figures["rows_read_p50_max"] = {m: [float(np.median(v)), max(v)] for m, v in matched.items()}
        figures["tries_mean_max"] = {m: [float(np.mean(v)), max(v)] for m, v in tries.items()}
        figures["load_average"] = open("/proc/loadavg").read().split()[:3]

    print(f"\n{args.chunks:,} chunks; build {figures.get('build')}; sizes {figures['sizes']}")
    print("| mode | p50 ms | p95 ms | p99 ms | queries | recall@10 vs exact | proven exact | rows read p50 / max | tries mean / max |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for m, p in figures["latency_ms"].items():
        r = figures["recall@10_vs_exact"].get(m)
        e = figures["proven_exact_share"].get(m)
        rr = figures["rows_read_p50_max"].get(m)
        tr = figures["tries_mean_max"].get(m)
        print(f"| {m} | {p['p50']:.1f} | {p['p95']:.1f} | {p['p99']:.1f} | {p['n']} | {'' if r is None else f'{r:.3f}'}"
              f" | {'' if e is None else f'{e:.2f}'} | {'' if rr is None else f'{rr[0]:.0f} / {rr[1]}'}"
              f" | {'' if tr is None else f'{tr[0]:.2f} / {tr[1]}'} |")
    print(json.dumps(figures))
    if args.json_out:
        args.json_out.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
