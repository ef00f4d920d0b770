"""What row-level security costs a search: `retrieval.search` itself (its prepare and search
statements, the rerank of hybrid+rerank; not logged) as the reader role (`rag_reader`, what every
CLI search acts as) and as the database superuser, for the same groups, in the same run.

Builds a scratch database `bench_reader_cost_<chunks>` per size on an embedded PostgreSQL
(default /tmp/rag-bench-reader, its own server). The generator: one document per two chunks, each
document a live version in the groups `all-staff` and `g<n>` (`--groups` of them, so a caller in
`g0` passes 1/GROUPS of the chunks: 1% by default); every tenth document also has a staged
(unpublished) second version with chunks, which the reader's policy must hide. Chunk text is drawn
in order from the SciFact abstracts of the shared corpus (../shared/corpus/qa/scifact_beir), or
from a seeded bag of words where that is missing; `tsv` is `to_tsvector('english', text)`.
Vectors are cheap random unit vectors of dimension 384 (loaded by COPY), and the HNSW index is
built after the load by the store's own `rag_ensure_vector_index`. Queries are SciFact claims
(text) with random unit vectors.

Each query runs as superuser and as reader back to back (the order alternates), each inside a
transaction that sets `rag.groups` as `retrieval.search` does, so load on a shared machine hits
both alike. Prints p50/p95 per mode and filter for each role, the reader/superuser ratio, and
whether both returned the same chunks. Figures only, no assertions.

    python bench/bench_reader_cost.py                          # 10,000 chunks
    python bench/bench_reader_cost.py --chunks 10000 100000 --queries 40
    python bench/bench_reader_cost.py --policies 006 014     # before and after migration 014
    python bench/bench_reader_cost.py --policies 014 018     # before and after migration 018
    python bench/bench_reader_cost.py --policies 018 019     # 018's rule by function, then by table
    python bench/bench_reader_cost.py --policies 019 028     # the chunk policy by version lookup, then on its own groups
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import psycopg
from bench_search_scale import FixedEncoder, scratch_url

from rag_pipeline import store
from rag_pipeline.retrieval import search as retrieval
from rag_pipeline.store import database, roles

DIMENSION = 384
RUN = "bench-run"
K = 10
PER_VERSION = 2
STAGED_EVERY = 10  # every tenth document has an unpublished (staged) second version
SCIFACT = Path(os.environ.get("RAG_CORPUS_DIR", Path(__file__).resolve().parents[2] / "shared" / "corpus")) / "qa" / "scifact_beir"
FILTERS = {"100%": ["all-staff"], "1%": ["g0"]}
MIGRATIONS = Path(__file__).resolve().parent.parent / "sql" / "migrations"
# The reader policies as migration 006 wrote them (before 014), for --policies 006: the groups
# function in every row's check, and the text match not leakproof.
POLICIES_006 = """
ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) NOT LEAKPROOF;
DROP POLICY IF EXISTS reader_groups ON document_versions;
CREATE POLICY reader_groups ON document_versions FOR SELECT TO rag_reader
    USING (status IN ('live', 'superseded') AND acl_groups && rag_session_groups());
DROP POLICY IF EXISTS reader_groups ON chunks;
CREATE POLICY reader_groups ON chunks FOR SELECT TO rag_reader
    USING (EXISTS (SELECT 1 FROM document_versions v WHERE v.id = chunks.version_id
                   AND v.status IN ('live', 'superseded') AND v.acl_groups && rag_session_groups()));
DROP POLICY IF EXISTS reader_groups ON documents;
CREATE POLICY reader_groups ON documents FOR SELECT TO rag_reader
    USING (EXISTS (SELECT 1 FROM document_versions v WHERE v.document_id = documents.id
                   AND v.status IN ('live', 'superseded') AND v.acl_groups && rag_session_groups()));
"""


def texts(count: int) -> list[str]:
    """`count` chunk texts: SciFact abstracts in file order (cycled), or seeded word salad."""
    path = SCIFACT / "corpus.jsonl"
    pool: list[str] = []
    if path.is_file():
        with path.open(encoding="utf-8") as f:
            pool = [" ".join(d["text"].split()) for d in map(json.loads, f) if d.get("text", "").strip()]
    if not pool:
        rng = random.Random(3)
        words = [f"term{i}" for i in range(5000)]
        pool = [" ".join(rng.choices(words, k=120)) for _ in range(2000)]
    # a second round through the pool gets a suffix, so no two chunks share a BM25 score exactly
    # (equal scores would be ordered by id, and float sums may order them differently per plan)
    return [pool[i % len(pool)] + (f" (Series {i // len(pool)}.)" if i >= len(pool) else "") for i in range(count)]


def queries(count: int) -> list[str]:
    path = SCIFACT / "queries.jsonl"
    if path.is_file():
        with path.open(encoding="utf-8") as f:
            found = [d["text"] for d in map(json.loads, f)]
        return found[:count]
    return [f"term{i} term{i * 7 % 5000} term{i * 13 % 5000}" for i in range(count)]


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    vectors = rng.standard_normal((n, DIMENSION), dtype=np.float32)
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def load(conn: psycopg.Connection, chunks: int, groups: int) -> dict[str, float]:
    """COPY the synthetic index, then build the HNSW index in one pass. Returns timings."""
    model_id = store.models.register_model(conn, {"name": "synthetic-384", "revision": "bench", "weights_sha256": "0" * 64,
                                                  "dimension": DIMENSION, "normalized": True, "max_tokens": 256})
    conn.execute(f"DROP INDEX IF EXISTS chunks_embedding_hnsw_{DIMENSION}")
    docs = -(-chunks // PER_VERSION)
    staged = docs // STAGED_EVERY
    started = time.perf_counter()
    with conn.transaction():
        conn.execute("INSERT INTO runs (run_id, sources, status, model_id) VALUES (%s, '{bench}', 'published', %s),"
                     " ('bench-staged', '{bench}', 'running', %s)", (RUN, model_id, model_id))
        conn.execute("INSERT INTO documents (id, source, uri) SELECT i, 'bench', 'doc-' || i FROM generate_series(1, %s) i",
                     (docs,))
        conn.execute(
            "INSERT INTO document_versions (id, document_id, version_no, kind, status, checksum, acl_groups, model_id,"
            " run_id, valid_from) SELECT i, i, 1, 'content', 'live', 'c' || i, ARRAY['all-staff', 'g' || (i %% %s)], %s, %s,"
            " now() - interval '1 day' FROM generate_series(1, %s) i",
            (groups, model_id, RUN, docs),
        )
        conn.execute(  # staged second versions of every tenth document: chunks no reader may see
            "INSERT INTO document_versions (id, document_id, version_no, kind, status, checksum, acl_groups, model_id,"
            " run_id) SELECT %s + i, i * %s, 2, 'content', 'staged', 's' || i, ARRAY['all-staff', 'g' || (i * %s %% %s)],"
            " %s, 'bench-staged' FROM generate_series(1, %s) i",
            (docs, STAGED_EVERY, STAGED_EVERY, groups, model_id, staged),
        )
        total = chunks + staged * PER_VERSION
        conn.execute("CREATE TEMP TABLE staged_rows (id bigint, text text, embedding vector) ON COMMIT DROP")
        rng = np.random.default_rng(12)
        pool = texts(total)
        with conn.cursor() as cur, cur.copy("COPY staged_rows (id, text, embedding) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["int8", "text", "vector"])
            for start in range(0, total, 10_000):
                block = unit_vectors(rng, min(10_000, total - start))
                for offset, vector in enumerate(block):
                    copy.write_row((start + offset, pool[start + offset], vector))
        conn.execute(  # chunk ids 0..chunks-1 belong to the live versions, the rest to the staged ones
            "INSERT INTO chunks (id, version_id, ord, char_start, char_end, token_count, content_hash, text, model_id,"
            " embedding, ts_config, tsv)"
            " SELECT id + 1, CASE WHEN id < %(live)s THEN id / %(per)s + 1 ELSE %(docs)s + (id - %(live)s) / %(per)s + 1 END,"
            " id %% %(per)s, 0, length(text), array_length(regexp_split_to_array(text, '\\s+'), 1), 'h' || id, text,"
            " %(model)s, embedding, 'english', to_tsvector('english', text) FROM staged_rows",
            {"live": chunks, "per": PER_VERSION, "docs": docs, "model": model_id},
        )
    with conn.transaction():  # the full-text statistics publish would have kept (migration 015)
        store.bm25_stats.rebuild(conn)
    timings = {"load_s": time.perf_counter() - started}
    started = time.perf_counter()
    conn.execute("SET maintenance_work_mem = '1GB'")
    with conn.transaction():
        store.models.ensure_vector_index(conn, DIMENSION)
    timings["hnsw_build_s"] = time.perf_counter() - started
    conn.execute("VACUUM ANALYZE chunks")
    conn.execute("VACUUM ANALYZE document_versions")
    conn.execute("VACUUM ANALYZE documents")
    return timings


def one_search(conn: psycopg.Connection, encoder: FixedEncoder, vector: np.ndarray, text: str, groups: list[str],
               mode: str) -> tuple[float, list[int]]:
    """`retrieval.search` itself, as a service calls it (not logged: the log write is the same
    insert for both roles), with the query vector handed over by a stand-in encoder. Returns
    seconds and the chunk ids."""
    encoder.vector = vector
    started = time.perf_counter()
    found = retrieval.search(conn, encoder, text, groups, k=K, mode=mode, log=False)
    return time.perf_counter() - started, [h.chunk_id for h in found]


POLICY_FILES = {"014": "014_reader_policies.sql", "018": "018_reader_history_and_purge.sql",
                "019": "019_reader_history_fast.sql", "028": "028_chunk_acl.sql"}  # idempotent files


def use_policies(url: str, which: str) -> None:
    """Put the reader policies of migration `which` in place in the scratch database: 006's, 014's,
    or 018's (the current ones: a superseded version only while the document is readable now)."""
    body = POLICIES_006 if which == "006" else (MIGRATIONS / POLICY_FILES[which]).read_text(encoding="utf-8")
    with database.connect(url) as conn, conn.transaction():
        conn.execute(body)


def measure(url: str, texts_: list[str], vectors: np.ndarray, modes: list[str], filters: list[str]) -> list[dict]:
    encoder = FixedEncoder()
    with database.connect(url) as su, database.connect_as(url, roles.READER) as reader:
        table = []
        for filter_name in filters:
            groups = FILTERS[filter_name]
            for mode in modes:
                times: dict[str, list[float]] = {"superuser": [], "reader": []}
                differ = 0
                for i, (text, vector) in enumerate(zip(texts_, vectors, strict=True)):
                    order = (("superuser", su), ("reader", reader))
                    found = {}
                    for name, conn in (order if i % 2 == 0 else order[::-1]):
                        seconds, found[name] = one_search(conn, encoder, vector, text, groups, mode)
                        if i:  # the first query warms caches and plans for both
                            times[name].append(seconds)
                    differ += found["superuser"] != found["reader"]
                row = {"filter": filter_name, "mode": mode, "differing_results": differ}
                for name, values in times.items():
                    row[f"{name}_p50_ms"] = round(float(np.percentile(values, 50)) * 1000, 2)
                    row[f"{name}_p95_ms"] = round(float(np.percentile(values, 95)) * 1000, 2)
                row["ratio_p50"] = round(row["reader_p50_ms"] / row["superuser_p50_ms"], 2)
                row["ratio_p95"] = round(row["reader_p95_ms"] / row["superuser_p95_ms"], 2)
                table.append(row)
                print(f"  {filter_name} {mode}: done", flush=True)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, nargs="+", default=[10_000])
    parser.add_argument("--groups", type=int, default=100, help="a caller in g0 passes 1/GROUPS of the chunks")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--modes", nargs="+", default=list(retrieval.MODES), choices=retrieval.MODES)
    parser.add_argument("--filters", nargs="+", default=list(FILTERS), choices=list(FILTERS))
    parser.add_argument("--policies", nargs="+", default=["028"], choices=["006", *POLICY_FILES],
                        help="measure under these reader policies in turn (006: as before migration 014;"
                             " 014: before 018; 018: the rule for history, by function; 019: by table;"
                             " 028: the current ones, on the chunk's own groups)")
    parser.add_argument("--pgdata", type=Path, default=Path("/tmp/rag-bench-reader/pgdata"))
    parser.add_argument("--reload", action="store_true", help="rebuild the scratch databases even if they exist")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    server = database.embedded_url(args.pgdata)
    texts_ = queries(args.queries + 1)
    vectors = unit_vectors(np.random.default_rng(99), len(texts_))
    summary: dict = {"queries": len(texts_) - 1, "k": K, "load_avg_start": [round(x, 2) for x in os.getloadavg()], "sizes": []}
    for chunks in args.chunks:
        name = f"bench_reader_cost_{chunks}"
        url = scratch_url(server, reset=args.reload, name=name)
        timings: dict[str, float] = {}
        with database.connect(url) as conn:
            loaded = conn.execute("SELECT count(*) FROM chunks c JOIN document_versions v ON v.id = c.version_id"
                                  " WHERE v.status = 'live'").fetchone()[0]
        if loaded != chunks:
            url = scratch_url(server, reset=True, name=name)
            with database.connect(url) as conn:
                timings = load(conn, chunks, args.groups)
            print(f"loaded {chunks:,} chunks: {timings['load_s']:.1f} s, HNSW build {timings['hnsw_build_s']:.1f} s", flush=True)
        for policies in args.policies:
            use_policies(url, policies)
            summary["sizes"].append({"chunks": chunks, "policies": policies, **{k: round(v, 1) for k, v in timings.items()},
                                     "modes": measure(url, texts_, vectors, args.modes, args.filters)})
        use_policies(url, max(POLICY_FILES))  # the current ones, as migrated
    summary["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
    print(f"\n{summary['queries']} queries per row, k={K}; times are retrieval.search beyond the query embedding (not logged), ms")
    print(f"{'chunks':>8} {'policy':<6} {'filter':<6} {'mode':<9} {'su p50':>8} {'su p95':>8} {'rd p50':>8} {'rd p95':>8}"
          f" {'p50 x':>6} {'p95 x':>6} {'differ':>6}")
    for size in summary["sizes"]:
        for r in size["modes"]:
            print(f"{size['chunks']:>8,} {size['policies']:<6} {r['filter']:<6} {r['mode']:<9} {r['superuser_p50_ms']:>8.1f} {r['superuser_p95_ms']:>8.1f}"
                  f" {r['reader_p50_ms']:>8.1f} {r['reader_p95_ms']:>8.1f} {r['ratio_p50']:>6.2f} {r['ratio_p95']:>6.2f}"
                  f" {r['differing_results']:>6}")
    print(f"load average {summary['load_avg_start']} -> {summary['load_avg_end']} (a shared machine: compare ratios, not ms)")
    print(json.dumps(summary))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
