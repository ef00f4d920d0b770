"""Search latency as the corpus grows: every mode as the reader role, with a 1% and a 50% ACL filter
and an as-of filter, recall@10 of each branch against an exact computation, and the cost of the
index per chunk (issue 21, item 4).

Per size (`--chunks 10000,100000`; 1,000,000 works the same way, given the hours to build it here)
a scratch database `bench_search_<n>` on its own embedded server (`--pgdata`) is loaded once and
kept for later runs:
  text     each chunk is 3 to 6 sentences drawn at random from the 5,183 SciFact abstracts (real
           vocabulary and term frequencies), `english` configuration; token count = word count
  vectors  cheap: random unit 384-d vectors around 1,000 topic centres (the packaged model's
           dimension; encoding a million chunks would take days here). Query vectors are drawn
           the same way, so vector recall is measured on a realistic neighbourhood structure,
           but hybrid relevance is not (bench_retrieval.py measures quality)
  groups   every version is in `all-staff`, in one of 100 groups g<n> (g0 passes 1%) and one of
           2 groups h<n> (h0 passes 50%); 10 chunks per version
  history  one document in ten has a second version, published a day after the first: as of
           the instant between, the first versions are what a caller sees (the as-of filter)
  languages with `--multilingual SHARE` (0 to 1), that share of the documents is Czech: their
           chunks get a text configuration of their own (`bench_czech`, a copy of English's, as
           their text is) and a multilingual vector as the stage step writes them (migration 034; cheap
           vectors again, around 1,000 other centres and closer to them, since e5's similarities
           crowd high: two chunks of one topic sit near 0.8) and the HNSW index over them, and a
           hybrid search reads the multilingual list as a real one does. The question's e5
           vector is handed over by a stand-in too; "hybrid+rerank, no list" times the same
           searches with the list left out, for the list's own cost; the caller `few other`
           (group `en-wide`: every English document and one Czech one in 100) sees many chunks
           but few of the list's rows
Loading goes by COPY and one INSERT .. SELECT (to_tsvector and the BM25 weights computed by the
database as at staging), then the full-text statistics are counted once (bm25_stats.rebuild, what
publish keeps incrementally), then the GIN and HNSW indexes are built: each step is timed.

Latency: `retrieval.search` itself (three round trips: prepare, search, log), k = 10, as the
reader role with the caller's groups, query text = a SciFact claim, the query vector handed over
by a stand-in encoder (so the figure is everything beyond the query embedding, rerank and the
search log write included). Recall@10: on the first `--sample` queries, as the superuser, the
vector branch as the store plans it against the exact scan, and the full-text branch against
BM25 scored over every matching row (bm25.rank without a budget). Figures only, no assertions.

    python bench/bench_search_scale.py --chunks 10000,100000 --queries 40
    python bench/bench_search_scale.py --chunks 100000 --multilingual 0.3   # the multilingual list too
    PYTHONPATH=<older tree> python bench/bench_search_scale.py --pgdata /tmp/x --queries 8   # before
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from pathlib import Path
from types import SimpleNamespace

if not os.environ.get("PYTHONPATH"):  # PYTHONPATH names another tree to measure (the "before" run)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from rag_pipeline import store
from rag_pipeline.embedding import multilingual
from rag_pipeline.retrieval import search as retrieval
from rag_pipeline.store import database, roles

DIMENSION = 384
SCRATCH = "bench_search_scale"
SCIFACT = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "qa" / "scifact_beir"
K = 10
PER_VERSION = 10
SPREAD = 0.8  # noise around a topic centre, as a share of the centre's length
MULTILINGUAL_SPREAD = 0.5  # the multilingual vectors' noise: chunks of one topic near 0.8, as e5's
NO_LIST = "hybrid+rerank, no list"
FILTERS = {"all": ["all-staff"], "50%": ["h0"], "1%": ["g0"], "as-of": ["all-staff"]}
# with --multilingual: a broad caller who sees few of the non-English chunks (group `en-wide`: every
# English document and one Czech document in a hundred), as an English-speaking majority of a company
# whose Czech documents belong to one team
FEW_OTHER = {"few other": ["en-wide"]}
WIDE, WIDE_OTHER_SHARE = "en-wide", 100  # the group, and one Czech document in this many carries it
MODES = ("vector", "fulltext", "hybrid", "hybrid+rerank")
WEIGHTS = "0" * 64


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


def normalised(rng: np.random.Generator, n: int, centres: np.ndarray | None, spread: float = SPREAD) -> np.ndarray:
    """Random unit vectors: around random centres (`centres` given), or uniform on the sphere."""
    vectors = rng.standard_normal((n, DIMENSION), dtype=np.float32)
    if centres is not None:
        vectors = centres[rng.integers(0, len(centres), n)] + spread / np.sqrt(DIMENSION) * vectors
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def topic_centres(count: int, seed: int = 7) -> np.ndarray | None:
    """Unit centres of the synthetic topics (None: uniform vectors). Fixed seed: the queries of
    a later run share the loaded chunks' topics."""
    if count == 0:
        return None
    centres = np.random.default_rng(seed).standard_normal((count, DIMENSION)).astype(np.float32)
    return centres / np.linalg.norm(centres, axis=1, keepdims=True)


def sentences() -> list[str]:
    found = []
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            found += [s.strip() for s in re.split(r"(?<=[.!?])\s+", doc["title"] + ". " + doc["text"]) if len(s) > 20]
    return found


def drop_text_index(conn: psycopg.Connection) -> str:
    """Drop the full-text GIN index before a bulk load (built after it, faster than updated) and
    return its definition as the migrations made it, to build it again."""
    definition = conn.execute("SELECT pg_get_indexdef(to_regclass('chunks_tsv'))").fetchone()[0]
    if definition is None:
        raise SystemExit("chunks_tsv is missing (a build stopped midway?): run again with --reload")
    conn.execute("DROP INDEX chunks_tsv")
    return definition


def load(conn: psycopg.Connection, chunks: int, seed: int) -> dict[str, float]:
    """The synthetic index (module docstring); returns each step's seconds."""
    timings: dict[str, float] = {}
    pool, rnd, rng, centres = sentences(), random.Random(seed), np.random.default_rng(seed), topic_centres(1000)
    model_id = store.models.register_model(conn, {"name": "synthetic-384", "revision": "bench", "weights_sha256": WEIGHTS,
                                                  "dimension": DIMENSION, "normalized": True, "max_tokens": 256})
    conn.execute(f"DROP INDEX IF EXISTS chunks_embedding_hnsw_{DIMENSION}")
    text_index = drop_text_index(conn)
    docs = -(-chunks // PER_VERSION)
    second = list(range(1, docs + 1, 10))  # documents with a second version
    started = time.perf_counter()
    with conn.transaction():
        conn.execute("INSERT INTO runs (run_id, sources, status, model_id) VALUES ('bench', '{bench}', 'published', %s)", (model_id,))
        conn.execute("INSERT INTO documents (id, source, uri) SELECT i, 'bench', 'doc-' || i FROM generate_series(1, %s) i", (docs,))
        conn.execute(
            "INSERT INTO document_versions (id, document_id, version_no, kind, status, checksum, acl_groups, model_id, run_id,"
            " valid_from, valid_to) SELECT i, i, 1, 'content', CASE WHEN i %% 10 = 1 THEN 'superseded' ELSE 'live' END,"
            " 'c' || i, ARRAY['all-staff', 'g' || (i %% 100), 'h' || (i %% 2)], %s, 'bench', now() - interval '2 days',"
            " CASE WHEN i %% 10 = 1 THEN now() - interval '1 day' END FROM generate_series(1, %s) i",
            (model_id, docs))
        conn.execute(
            "INSERT INTO document_versions (id, document_id, version_no, kind, status, checksum, acl_groups, model_id, run_id,"
            " valid_from) SELECT %s + i, i, 2, 'content', 'live', 'd' || i, ARRAY['all-staff', 'g' || (i %% 100), 'h' || (i %% 2)],"
            " %s, 'bench', now() - interval '1 day' FROM unnest(%s::int[]) i",
            (docs, model_id, second))
        conn.execute("CREATE TEMP TABLE staged (version_id bigint, ord int, text text, embedding vector) ON COMMIT DROP")
        versions = [(v, n) for v in range(1, docs + 1) for n in range(min(PER_VERSION, chunks - (v - 1) * PER_VERSION))]
        versions += [(docs + d, n) for d in second for n in range(PER_VERSION)]
        with conn.cursor() as cur, cur.copy("COPY staged FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["int8", "int4", "text", "vector"])
            for start in range(0, len(versions), 10_000):
                block = versions[start:start + 10_000]
                for (version, ordinal), vector in zip(block, normalised(rng, len(block), centres), strict=True):
                    copy.write_row((version, ordinal, " ".join(rnd.choices(pool, k=rnd.randint(3, 6))), vector))
        conn.execute(
            "INSERT INTO chunks (version_id, ord, char_start, char_end, token_count, content_hash, text, model_id,"
            " embedding, ts_config, tsv) SELECT version_id, ord, 0, length(text), array_length(regexp_split_to_array(text, '\\s+'), 1),"
            " md5(text), text, %s, embedding, 'english', to_tsvector('english', text) FROM staged ORDER BY version_id, ord",
            (model_id,))
    timings["insert_s"] = time.perf_counter() - started
    if hasattr(store, "bm25_stats"):
        started = time.perf_counter()
        with conn.transaction():
            store.bm25_stats.rebuild(conn)
        timings["statistics_s"] = time.perf_counter() - started
    conn.execute("SET maintenance_work_mem = '4GB'")  # the HNSW graph of 1M chunks (2.2 GB) built in memory
    started = time.perf_counter()
    conn.execute(text_index)
    timings["gin_build_s"] = time.perf_counter() - started
    started = time.perf_counter()
    with conn.transaction():
        store.models.ensure_vector_index(conn, DIMENSION)
    timings["hnsw_build_s"] = time.perf_counter() - started
    conn.execute("VACUUM ANALYZE chunks")
    conn.execute("VACUUM ANALYZE document_versions")
    return timings


def multilingual_share(conn: psycopg.Connection) -> float:
    """The share of live chunks that have a multilingual vector now."""
    live, listed = conn.execute(
        "SELECT count(*), count(x.chunk_id) FROM chunks c JOIN document_versions v ON v.id = c.version_id"
        " LEFT JOIN chunk_multilingual x ON x.chunk_id = c.id WHERE v.status = 'live'").fetchone()
    return listed / max(live, 1)


def add_multilingual(conn: psycopg.Connection, share: float, seed: int) -> dict[str, float]:
    """Make `share` of the documents Czech (language and text configuration are set at staging:
    here in place, bypassing the history triggers, on a scratch database, with the full-text
    statistics counted again) and give every chunk of theirs a multilingual vector; any earlier
    share's rows go first. Returns each step's seconds. The
    share is drawn by a hash of the document id, so it cuts across the group filters (g<n>, h<n>
    are the id modulo 100 and 2); every English document and one Czech document in
    WIDE_OTHER_SHARE (another hash) also get the group WIDE (FEW_OTHER's caller)."""
    timings: dict[str, float] = {}
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    conn.execute("DROP INDEX IF EXISTS chunk_multilingual_hnsw")
    conn.execute(f"DROP INDEX IF EXISTS chunks_embedding_hnsw_{DIMENSION}")  # rebuilt below: faster than updated
    text_index = drop_text_index(conn)
    with conn.transaction():  # history's guards held off for this rewrite alone
        conn.execute("SET LOCAL session_replication_role = replica")
        conn.execute("DELETE FROM chunk_multilingual")
        conn.execute("UPDATE document_versions SET language = CASE WHEN abs(hashint4(document_id::int)) %% 1000 < %s"
                     " THEN 'cs' ELSE 'en' END", (round(share * 1000),))
        # a configuration of its own for the "Czech" chunks, as staging gives a Czech document; their
        # text is English (SciFact's), so it is English's under another name: full text costs what it
        # does for English, while the search sees another language than English (its list runs)
        if conn.execute("SELECT to_regclass('pg_catalog.pg_ts_config') IS NOT NULL AND"
                        " NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = 'bench_czech')").fetchone()[0]:
            conn.execute("CREATE TEXT SEARCH CONFIGURATION bench_czech (COPY = english)")
        conn.execute("UPDATE document_versions SET acl_groups = array_remove(acl_groups, %s)", (WIDE,))
        conn.execute("UPDATE document_versions SET acl_groups = acl_groups || %s::text WHERE language = 'en'"
                     " OR abs(hashint4(document_id::int * 7)) %% %s = 0", (WIDE, WIDE_OTHER_SHARE))
        conn.execute("UPDATE chunks c SET ts_config = x.cfg, tsv = CASE WHEN c.ts_config = x.cfg THEN c.tsv"
                     " ELSE to_tsvector(x.cfg, c.text) END, acl_groups = v.acl_groups"
                     " FROM document_versions v, LATERAL (SELECT CASE WHEN v.language = 'cs' THEN 'bench_czech'"
                     " ELSE 'english' END::regconfig AS cfg) x WHERE v.id = c.version_id"
                     " AND (c.ts_config <> x.cfg OR c.acl_groups IS DISTINCT FROM v.acl_groups)")
        store.bm25_stats.rebuild(conn)
    conn.execute("SET maintenance_work_mem = '2GB'")
    conn.execute(text_index)
    with conn.transaction():
        store.models.ensure_vector_index(conn, DIMENSION)
    conn.execute("VACUUM ANALYZE chunks")
    with conn.transaction():  # the rows' own triggers on (035 copies each chunk's groups)
        ids = [r[0] for r in conn.execute(
            "SELECT c.id FROM chunks c JOIN document_versions v ON v.id = c.version_id"
            " WHERE v.language = 'cs' ORDER BY c.id").fetchall()]
        with conn.cursor() as cur, cur.copy("COPY chunk_multilingual (chunk_id, model, embedding) FROM STDIN"
                                            " WITH (FORMAT BINARY)") as copy:
            copy.set_types(["int8", "text", "vector"])
            centres = topic_centres(1000, seed=8)
            for start in range(0, len(ids), 10_000):
                block = ids[start:start + 10_000]
                for chunk_id, vector in zip(block, normalised(rng, len(block), centres, MULTILINGUAL_SPREAD), strict=True):
                    copy.write_row((chunk_id, multilingual.MODEL, vector))
    timings["multilingual_insert_s"] = time.perf_counter() - started
    started = time.perf_counter()
    conn.execute("CREATE INDEX chunk_multilingual_hnsw ON chunk_multilingual USING hnsw (embedding vector_cosine_ops)")
    timings["multilingual_hnsw_build_s"] = time.perf_counter() - started
    conn.execute("VACUUM ANALYZE chunk_multilingual")
    conn.execute("VACUUM ANALYZE document_versions")
    return timings


def sizes(conn: psycopg.Connection) -> dict[str, float]:
    """Bytes per chunk of the chunks table, each index and the full-text statistics."""
    n = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    found = {"chunks": n}
    for name in ("chunks", "chunks_tsv", f"chunks_embedding_hnsw_{DIMENSION}", "fts_acl_terms", "fts_acl_corpus",
                 "chunk_multilingual", "chunk_multilingual_hnsw"):
        size = conn.execute("SELECT pg_total_relation_size(to_regclass(%s))", (name,)).fetchone()[0]
        if size is not None:
            found[f"{name}_bytes_per_chunk"] = round(size / n, 1)
    if conn.execute("SELECT 1 FROM information_schema.columns WHERE table_name = 'chunks' AND column_name = 'bm25'").fetchone():
        found["bm25_column_bytes_per_chunk"] = round(float(conn.execute("SELECT avg(pg_column_size(bm25)) FROM chunks").fetchone()[0]), 1)
    return found


class FixedEncoder:
    """Stands in for the model: returns the query vector the bench drew, under the synthetic
    model's identity (the search checks the index was embedded with the model it is given)."""

    identity = SimpleNamespace(weights_sha256=WEIGHTS, numerics="fp32", name="synthetic-384")

    def __init__(self) -> None:
        self.vector = np.zeros(DIMENSION, dtype=np.float32)

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.vector for _ in texts])


class FixedMultilingual:
    """Stands in for the multilingual model's query side (embedding.multilingual.encode_queries):
    the question's vector the bench drew; `off` leaves the list out as a failed model would."""

    def __init__(self) -> None:
        self.vector = np.zeros(DIMENSION, dtype=np.float32)
        self.off = False

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        if self.off:
            raise multilingual.MultilingualModelError("left out by the bench")
        return np.stack([self.vector for _ in texts])


def filters(with_list: bool) -> dict[str, list[str]]:
    """The callers measured: FEW_OTHER's too where the index has multilingual vectors."""
    return {**FILTERS, **FEW_OTHER} if with_list else FILTERS


def timed_searches(url: str, claims: list[str], vectors: np.ndarray, xvectors: np.ndarray, as_of,
                   with_list: bool) -> dict[str, dict[str, list[float]]]:
    """Milliseconds per search, by filter and mode, as the reader role (`with_list`: also the
    default mode with the multilingual list left out)."""
    encoder, crossed = FixedEncoder(), FixedMultilingual()
    retrieval.multilingual.encode_queries = crossed.encode_queries  # the stand-in, as the encoder's
    times: dict[str, dict[str, list[float]]] = {}
    modes = (*MODES, NO_LIST) if with_list else MODES
    with database.connect_as(url, roles.READER) as conn:
        for claim, vector, xvector in zip(claims, vectors, xvectors, strict=True):  # a service's caches are warm: so are ours
            encoder.vector, crossed.vector = vector, xvector
            retrieval.search(conn, encoder, claim, ["all-staff"], k=K, mode="hybrid", log=False)
        for label, groups in filters(with_list).items():
            when = as_of if label == "as-of" else None
            for name in modes:
                mode, crossed.off = ("hybrid+rerank", True) if name == NO_LIST else (name, False)
                encoder.vector, crossed.vector = vectors[0], xvectors[0]
                retrieval.search(conn, encoder, claims[0], groups, k=K, mode=mode, as_of=when)  # warm: plans
                found = times.setdefault(label, {}).setdefault(name, [])
                for claim, vector, xvector in zip(claims, vectors, xvectors, strict=True):
                    encoder.vector, crossed.vector = vector, xvector
                    started = time.perf_counter()
                    retrieval.search(conn, encoder, claim, groups, k=K, mode=mode, as_of=when)
                    found.append((time.perf_counter() - started) * 1000)
            print(f"  {label}: timed", flush=True)
    return times


def multilingual_list(conn: psycopg.Connection, xvector: np.ndarray, groups: list[str], model_id: int, view,
                      plan, seen: int | None = None) -> list[int]:
    """The first K ids of the multilingual list as a search under `plan` reads it (the index
    walk for a broad caller who sees more than a few of its rows: `seen`), with no similarity
    floor: what recall is measured on."""
    from rag_pipeline.store import multilingual_vectors
    from rag_pipeline.store.search import _apply_index_settings, _filter_params, _where

    if hasattr(multilingual_vectors, "strategy"):
        read = multilingual_vectors.strategy(plan, seen)
        walk, sql = read == "index", multilingual_vectors.branch(_where(view), read)
    else:  # an older tree (PYTHONPATH): the vector plan's choice, branch(where, walk)
        walk = plan.strategy == "index"
        sql = multilingual_vectors.branch(_where(view), walk)
    params = {**_filter_params(groups, model_id, view), **multilingual_vectors.Query(
        xvector, multilingual.MODEL, -1.0).params(), "cand": K}
    with conn.transaction():
        if walk:
            _apply_index_settings(conn, plan, True)
        return [r[0] for r in conn.execute(f"SELECT id FROM ({sql}) b ORDER BY rnk", params).fetchall()]  # noqa: S608 -- the store's fragments


def recalls(url: str, claims: list[str], vectors: np.ndarray, xvectors: np.ndarray, as_of,
            with_list: bool) -> dict[str, dict[str, float]]:
    """Recall@10 of each branch against its exact computation, by filter (superuser)."""
    from rag_pipeline.store import bm25
    from rag_pipeline.store.search import EXACT, View

    found: dict[str, dict[str, float]] = {}
    with database.connect(url) as conn:
        model_id = conn.execute("SELECT id FROM embedding_models WHERE name = 'synthetic-384'").fetchone()[0]
        for label, groups in filters(with_list).items():
            view = View(as_of=as_of) if label == "as-of" else View()
            vector_hits = fulltext_hits = vector_total = fulltext_total = listed_hits = listed_total = 0
            seen = int(conn.execute("SELECT coalesce(sum(chunks), 0) FROM fts_acl_corpus WHERE acl_groups && %s::text[]"
                                    " AND ts_config <> 'english'::regconfig", (groups,)).fetchone()[0])
            for claim, vector, xvector in zip(claims, vectors, xvectors, strict=True):
                plan = store.search.plan_vector(conn, groups, model_id, view)
                got = [r["chunk_id"] for r in store.search.search_chunks(conn, vector, claim, groups, model_id, K, view, mode="vector", plan=plan)]
                exact = [r["chunk_id"] for r in store.search.search_chunks(conn, vector, claim, groups, model_id, K, view, mode="vector", plan=EXACT)]
                vector_hits, vector_total = vector_hits + len(set(got) & set(exact)), vector_total + len(exact)
                got = [r["chunk_id"] for r in store.search.search_chunks(conn, vector, claim, groups, model_id, K, view, mode="fulltext")]
                terms, live = bm25.query_terms(conn, claim, None, groups)
                exact = bm25.rank(conn, terms, store.search._where(view), store.search._version_filter(view),
                                  store.search._filter_params(groups, model_id, view), K, budget=None,
                                  loose_bound=view != View(), live_chunks=live).ids
                fulltext_hits, fulltext_total = fulltext_hits + len(set(got) & set(exact)), fulltext_total + len(exact)
                if with_list:
                    got = multilingual_list(conn, xvector, groups, model_id, view, plan, None if label == "as-of" else seen)
                    exact = multilingual_list(conn, xvector, groups, model_id, view, EXACT)
                    listed_hits, listed_total = listed_hits + len(set(got) & set(exact)), listed_total + len(exact)
            found[label] = {"vector": vector_hits / max(vector_total, 1), "fulltext": fulltext_hits / max(fulltext_total, 1)}
            if with_list:
                found[label]["multilingual"] = listed_hits / max(listed_total, 1)
    return found


def percentiles(ms: list[float]) -> dict[str, float]:
    return {f"p{q}": round(float(np.percentile(ms, q)), 1) for q in (50, 95, 99)}


def run_size(server: str, chunks: int, args: argparse.Namespace) -> dict:
    name = f"bench_search_{chunks}"
    url = scratch_url(server, reset=args.reload, name=name)
    figures: dict = {"chunks": chunks}
    with database.connect(url) as conn:
        live = conn.execute("SELECT count(*) FROM chunks c JOIN document_versions v ON v.id = c.version_id"
                            " WHERE v.status = 'live'").fetchone()[0]
    if live != chunks:
        url = scratch_url(server, reset=True, name=name)
        with database.connect(url) as conn:
            figures["build_s"] = {k: round(v, 1) for k, v in load(conn, chunks, seed=11).items()}
            figures["build_ms_per_chunk"] = round(sum(figures["build_s"].values()) * 1000 / chunks, 2)
        print(f"{chunks:,} chunks built: {figures['build_s']}", flush=True)
    with database.connect(url) as conn:
        other = conn.execute("SELECT EXISTS (SELECT 1 FROM fts_acl_corpus WHERE ts_config::text = 'bench_czech')"
                             " AND EXISTS (SELECT 1 FROM fts_acl_corpus WHERE %s = ANY(acl_groups))", (WIDE,)).fetchone()[0]
        if abs(multilingual_share(conn) - args.multilingual) > 0.02 or other != (args.multilingual > 0):
            figures["multilingual_build_s"] = {k: round(v, 1) for k, v in add_multilingual(conn, args.multilingual, 13).items()}
            print(f"multilingual vectors for {args.multilingual:.0%}: {figures['multilingual_build_s']}", flush=True)
        figures["multilingual_share"] = round(multilingual_share(conn), 3)
        figures["sizes"] = sizes(conn)
        as_of = conn.execute("SELECT min(valid_from) + interval '12 hours' FROM document_versions").fetchone()[0]
    with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as f:
        claims = random.Random(5).sample([json.loads(line)["text"] for line in f], args.queries)
    vectors = normalised(np.random.default_rng(99), args.queries, topic_centres(1000))
    xvectors = normalised(np.random.default_rng(98), args.queries, topic_centres(1000, seed=8), MULTILINGUAL_SPREAD)
    with_list = figures["multilingual_share"] > 0
    load_before = os.getloadavg()
    times = timed_searches(url, claims, vectors, xvectors, as_of, with_list)
    figures["latency_ms"] = {f: {m: percentiles(v) for m, v in modes.items()} for f, modes in times.items()}
    if args.sample and "bm25" in dir(store):
        figures["recall_at_10"] = recalls(url, claims[:args.sample], vectors[:args.sample], xvectors[:args.sample],
                                          as_of, with_list)
    figures["load_average"] = [round(x, 2) for x in load_before] + [round(x, 2) for x in os.getloadavg()]
    return figures


def report(r: dict, queries: int) -> None:
    print(f"\n{r['chunks']:,} live chunks ({r['multilingual_share']:.0%} with a multilingual vector), {queries} queries,"
          f" k={K}, reader role; load {r['load_average']}")
    print(f"sizes per chunk: {r['sizes']}")
    if "build_s" in r:
        print(f"build: {r['build_s']} ({r['build_ms_per_chunk']} ms per chunk)")
    if "multilingual_build_s" in r:
        print(f"multilingual vectors: {r['multilingual_build_s']}")
    print("| filter | mode | p50 ms | p95 ms | p99 ms |")
    print("|---|---|---:|---:|---:|")
    for label, modes in r["latency_ms"].items():
        for mode, p in modes.items():
            print(f"| {label} | {mode} | {p['p50']} | {p['p95']} | {p['p99']} |")
    if "recall_at_10" in r:
        print("recall@10 vs exact:", json.dumps(r["recall_at_10"]), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", default="10000,100000", help="comma-separated corpus sizes (live chunks)")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--sample", type=int, default=20, help="queries whose recall@10 is measured (0: none)")
    parser.add_argument("--pgdata", type=Path, default=Path("/tmp/rag-bench-search/pgdata"))
    parser.add_argument("--reload", action="store_true", help="rebuild the scratch databases")
    parser.add_argument("--multilingual", type=float, default=0.0,
                        help="share of documents (0 to 1) that are Czech, with multilingual vectors (default 0: none)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if not 0 <= args.multilingual <= 1:
        parser.error("--multilingual is a share between 0 and 1")
    server = database.embedded_url(args.pgdata)
    results = []
    for n in args.chunks.split(","):  # each size's table as soon as it is measured (a 1M build takes hours)
        results.append(run_size(server, int(n), args))
        report(results[-1], args.queries)
        if args.json:
            args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
