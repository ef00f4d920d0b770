"""The opt-in int8 encoder beside fp32: speed and SciFact retrieval quality, so a user can choose
knowingly (`embedding.backend: onnx-int8`, README "The embedding model").

Both encoders embed the same SciFact abstracts, chunked by the project's chunker exactly as
bench_retrieval.py chunks them; vector search is exact (numpy, a document scores its best
chunk), so the figures compare the encoders and nothing else. Baseline in the same run: fp32
(the `auto` backend of this machine). By default a subset, to fit a busy 2-core machine: the
first `--queries` test queries and a corpus of every abstract relevant to them plus random
others (seeded) up to `--docs`; `--docs 0` takes all 5,183 abstracts (bench_retrieval.py's
setting; its nDCG@10 is lower than the subset's, which has fewer distractors).

    python bench/bench_int8.py                        # 300 queries, 1,000 abstracts
    python bench/bench_int8.py --docs 0 --json /tmp/int8.json
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
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np
from bench_retrieval import SCIFACT, chunk_corpus, load_jsonl, load_qrels, ndcg_at

from rag_pipeline.embedding import Embedder
from rag_pipeline.embedding.backends import AUTO, ONNX_INT8, agreement


def subset(docs: list[dict], qrels: dict[str, dict[str, int]], size: int, seed: int = 0) -> list[dict]:
    """Every abstract some query needs, then random others up to `size` (0: all)."""
    if size <= 0:
        return docs
    needed = {doc for relevant in qrels.values() for doc in relevant}
    others = [d for d in docs if d["_id"] not in needed]
    random.Random(seed).shuffle(others)
    chosen = [d for d in docs if d["_id"] in needed] + others[: max(0, size - len(needed))]
    return chosen


def scores(doc_ids: list[str], vectors: np.ndarray, queries: np.ndarray, qrels: list[dict[str, int]]) -> dict[str, float]:
    """nDCG@10 and recall@10 with each document scored by its best chunk."""
    similarity = queries @ vectors.T
    order = sorted(set(doc_ids))
    column = {d: i for i, d in enumerate(order)}
    owner = np.array([column[d] for d in doc_ids])
    best = np.full((len(queries), len(order)), -np.inf, dtype=np.float32)
    np.maximum.at(best.T, owner, similarity.T)
    ndcg = recall = 0.0
    for row, relevant in zip(best, qrels, strict=True):
        ranked = [order[i] for i in np.argsort(-row, kind="stable")[:10]]
        ndcg += ndcg_at(ranked, relevant, 10)
        recall += len(set(ranked) & set(relevant)) / len(relevant)
    return {"ndcg@10": round(ndcg / len(qrels), 4), "recall@10": round(recall / len(qrels), 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=300, help="first N test queries (SciFact test has 300)")
    parser.add_argument("--docs", type=int, default=1000, help="abstracts in the corpus (0: all 5,183)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    qrels = dict(list(load_qrels(SCIFACT / "qrels" / "test.tsv").items())[: args.queries])
    query_text = {q["_id"]: q["text"] for q in load_jsonl(SCIFACT / "queries.jsonl")}
    fp32 = Embedder(backend=AUTO)
    docs = subset(load_jsonl(SCIFACT / "corpus.jsonl"), qrels, args.docs)
    chunked = chunk_corpus(fp32, docs)
    doc_ids = [doc for doc, chunks in chunked for _ in chunks]
    texts = [c["search_text"] for _, chunks in chunked for c in chunks]
    questions = [query_text[q] for q in qrels]
    print(f"SciFact test: {len(qrels)} queries over {len(docs)} abstracts ({len(texts)} chunks); "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    results: dict[str, dict] = {}
    vectors: dict[str, np.ndarray] = {}
    for name, embedder in (("fp32", fp32), ("int8", Embedder(backend=ONNX_INT8))):
        embedder.encode(texts[:16])  # backend chosen, model loaded, export built: not timed
        started = time.perf_counter()
        vectors[name] = embedder.encode(texts)
        seconds = time.perf_counter() - started
        found = scores(doc_ids, vectors[name], embedder.encode(questions), list(qrels.values()))
        results[name] = {"backend": embedder.encoded_with.backend, "numerics": embedder.identity.numerics,
                         "texts_per_s": round(len(texts) / seconds, 1), **found}
        print(f"{name}: {results[name]}; load {os.getloadavg()[0]:.1f}", flush=True)
    close = agreement(vectors["fp32"], vectors["int8"])
    results["int8_vs_fp32"] = {"min_cosine": round(close.min_cosine, 4),
                               "mean_cosine": round(float(np.mean(np.sum(vectors["fp32"] * vectors["int8"], axis=1))), 4),
                               "speed": round(results["int8"]["texts_per_s"] / results["fp32"]["texts_per_s"], 2)}
    print("| encoder | numerics | texts/s | nDCG@10 | recall@10 |\n|---|---|---:|---:|---:|")
    for name in ("fp32", "int8"):
        r = results[name]
        print(f"| {r['backend']} | {r['numerics']} | {r['texts_per_s']} | {r['ndcg@10']} | {r['recall@10']} |")
    print(f"int8 / fp32 speed {results['int8_vs_fp32']['speed']}x; cosine with fp32 min "
          f"{results['int8_vs_fp32']['min_cosine']}, mean {results['int8_vs_fp32']['mean_cosine']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
