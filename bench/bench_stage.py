"""Staging writes: chunk rows through COPY (store.versions.stage_content_version) against the
row-by-row INSERT (executemany) it replaced, measured in the same run on the same database.

Stages D documents of k chunks each (real SciFact text, random 384-dimensional vectors) into a
fresh embedded PostgreSQL that has the project's indexes (GIN on tsv, HNSW on the embedding),
one transaction per document as the stage step does; rounds alternate the two writers and the
best round of each counts. Prints rows/s of each and the ratio.

    python bench/bench_stage.py                       # 200 documents x 3 and x 30 chunks
    python bench/bench_stage.py --docs 100 --chunks 10 --json /tmp/stage.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench_sync import bench_config  # noqa: E402
from generated_corpus import abstracts  # noqa: E402

from rag_pipeline import store  # noqa: E402
from rag_pipeline.store import database, text_search  # noqa: E402
from rag_pipeline.sync.context import prepare_database  # noqa: E402

DIM = 384


def rowwise_stage(conn, run_id: str, uri: str, fields: dict, chunks: list[dict], vectors: np.ndarray) -> None:
    """The writer before COPY, kept here as the baseline: one INSERT per chunk (executemany)."""
    config = text_search.config_for_language(fields.get("language"))
    with conn.transaction():
        version_id = store.versions._new_version(conn, store.versions._document_id(conn, "s", uri), run_id, fields)
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO chunks (version_id, ord, section_path, page_start, page_end, char_start,"
                " char_end, token_count, content_hash, text, search_prefix, model_id, embedding, ts_config, tsv)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::regconfig,"
                " to_tsvector(%s::regconfig, %s))",
                [(version_id, c["ord"], c["section_path"], c.get("page_start"), c.get("page_end"), c["char_start"],
                  c["char_end"], c["token_count"], c["content_hash"], c["text"], c.get("search_prefix"),
                  fields["model_id"], vectors[i], config, config, c["search_text"]) for i, c in enumerate(chunks)],
            )


def copy_stage(conn, run_id: str, uri: str, fields: dict, chunks: list[dict], vectors: np.ndarray) -> None:
    store.versions.stage_content_version(conn, run_id, "s", uri, fields, chunks, vectors)


def documents(count: int, per_doc: int, tag: str) -> list[tuple[str, list[dict], np.ndarray]]:
    pool = abstracts()
    rng = np.random.default_rng(len(tag))
    docs = []
    for d in range(count):
        chunks = []
        for o in range(per_doc):
            title, text = pool[(d * per_doc + o) % len(pool)]
            chunks.append({"ord": o, "section_path": [title], "char_start": 0, "char_end": len(text),
                           "token_count": len(text) // 4, "content_hash": f"{tag}-{d}-{o}", "text": text,
                           "search_prefix": f"{title}\n", "search_text": f"{title}\n{text}"})
        vectors = rng.standard_normal((per_doc, DIM)).astype(np.float32)
        docs.append((f"{tag}/doc-{d}.md", chunks, vectors / np.linalg.norm(vectors, axis=1, keepdims=True)))
    return docs


def measure(url: str, docs: int, per_doc: int, rounds: int) -> dict:
    writers = {"insert": rowwise_stage, "copy": copy_stage}
    best = dict.fromkeys(writers, float("inf"))
    with database.connect(url) as conn:
        model_id = store.models.register_model(conn, {"name": "bench-stage", "revision": "r", "weights_sha256": "w",
                                                      "dimension": DIM, "normalized": True, "max_tokens": 256})
        store.roles.assume(conn, store.roles.WRITER)
        for r in range(rounds):
            for name, write in writers.items():
                run_id = f"{name}-{per_doc}-{r}"
                store.runs.create_run(conn, run_id, ["s"], model_id)
                batch = documents(docs, per_doc, run_id)
                fields = {"checksum": "c", "acl_groups": ["g"], "model_id": model_id, "language": "en"}
                started = time.perf_counter()
                for uri, chunks, vectors in batch:
                    write(conn, run_id, uri, fields, chunks, vectors)
                best[name] = min(best[name], time.perf_counter() - started)
    rows = docs * per_doc
    return {"documents": docs, "chunks_per_document": per_doc, "rows": rows,
            "insert_s": round(best["insert"], 3), "copy_s": round(best["copy"], 3),
            "insert_rows_per_s": round(rows / best["insert"], 1), "copy_rows_per_s": round(rows / best["copy"], 1),
            "copy_speedup": round(best["insert"] / best["copy"], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--chunks", type=int, nargs="+", default=[3, 30], help="chunks per document (one case each)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rag-bench-stage-"))
    work.chmod(0o755)
    try:
        (work / "docs").mkdir()
        url = prepare_database(bench_config(work, work / "docs"))
        results = [measure(url, args.docs, k, args.rounds) for k in args.chunks]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'docs':>5} {'chunks/doc':>10} {'INSERT rows/s':>13} {'COPY rows/s':>11} {'COPY speed-up':>13}")
    for r in results:
        print(f"{r['documents']:>5} {r['chunks_per_document']:>10} {r['insert_rows_per_s']:>13.0f} "
              f"{r['copy_rows_per_s']:>11.0f} {r['copy_speedup']:>12.2f}x")
    print(f"load average {os.getloadavg()[0]:.2f} (2 shared cores: compare the ratio, not the rates)")
    if args.json:
        args.json.write_text(json.dumps({"bench": "stage", "results": results, "load_average": os.getloadavg()[0]}, indent=2))


if __name__ == "__main__":
    main()
