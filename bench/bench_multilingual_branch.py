"""The multilingual list of a hybrid search (migration 034, store/multilingual_vectors.py), through
the project's own `search` on a synced index: evidence@3 / @10 and nDCG@10 of the answering chunk
(evaluation's rule), per class of question, with the list off and at each similarity floor.

A case's class is its own `classes` label where the set has them (evalsets/generalisation), else
its question's language against its document's, as bench_multilingual.py tells it: `english`
(English on English), `same-language` (German on German, ...), `cross-lingual` (English on a
Czech, German, French or Korean document). `--split calibration` scores the half the floor is
fitted on, `report` the other half, `all` both. The time per search is `search` itself (query
embedding by both models, the statement, the rerank), after a warm-up pass per setting. The index must have been synced by this tree
(the sync writes the multilingual vectors). Figures only; nothing is written to the index (the
searches are not logged).

    python bench/bench_multilingual_branch.py --config /tmp/rag-corpus-eval/rag_pipeline.yaml \\
        --eval-set evalsets/corpus/eval.yaml --split calibration --floors off,0.78,0.80,0.82,0.84
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from bench_multilingual import question_language

from rag_pipeline.config import load_config
from rag_pipeline.embedding import embedder_for, multilingual
from rag_pipeline.evaluation.evaluate import in_calibration_split, is_relevant, load_eval_set
from rag_pipeline.retrieval import search as searching
from rag_pipeline.store import database
from rag_pipeline.sync.context import prepare_database


def case_class(case, languages: dict[str, str]) -> str:
    """The set's own class label (its first), else the question's language against its document's."""
    if case.classes:
        return case.classes[0]
    document = languages.get(case.expect_source or "")
    asked = question_language(case.question)
    if document is None or document == "en":
        return "english"
    return "same-language" if asked == document else "cross-lingual"


def document_languages(conn) -> dict[str, str]:
    found = conn.execute("SELECT d.uri, d.source, v.language FROM documents d JOIN document_versions v"
                         " ON v.document_id = d.id WHERE v.status = 'live' AND v.kind = 'content'").fetchall()
    return {**{u: lang for u, _, lang in found}, **{f"{s}/{u}": lang for u, s, lang in found}}


def run(conn, embedder, cases, floor: str, k: int = 10) -> tuple[dict[str, list[int | None]], float]:
    """First relevant rank per case, by class; and the mean search time in ms."""
    original = multilingual.MODEL
    if floor == "off":  # no index rows match this model: the list is never searched
        searching.multilingual.MODEL = "off"
    else:
        searching.MULTILINGUAL_FLOOR = float(floor)
    ranks: dict[str, list[int | None]] = defaultdict(list)
    spent = 0.0
    try:
        for case, label in cases:
            started = time.perf_counter()
            hits = searching.search(conn, embedder, case.question, list(case.groups), k=k, as_of=case.as_of, log=False)
            spent += time.perf_counter() - started
            rank = next((i + 1 for i, h in enumerate(hits) if is_relevant(h, case)), None)
            ranks[label].append(rank)
            ranks["all"].append(rank)
    finally:
        searching.multilingual.MODEL = original
    return ranks, 1000 * spent / max(1, len(cases))


def figures(found: list[int | None]) -> str:
    n = len(found)
    at3 = sum(1 for r in found if r is not None and r <= 3) / n
    at10 = sum(1 for r in found if r is not None) / n
    ndcg = sum(1 / math.log2(r + 1) for r in found if r is not None) / n
    return f"{n:>4} {at3:.3f} {at10:.3f} {ndcg:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--eval-set", required=True)
    parser.add_argument("--split", choices=("calibration", "report", "all"), default="calibration")
    parser.add_argument("--floors", default="off,0.78,0.80,0.82,0.84")
    args = parser.parse_args()
    config = load_config(args.config)
    url = prepare_database(config)
    embedder = embedder_for(config.embedding)
    cases = [c for c in load_eval_set(Path(args.eval_set)) if not c.expect_refused and c.expect_evidence]
    if args.split != "all":
        cases = [c for c in cases if in_calibration_split(c) == (args.split == "calibration")]
    with database.connect(url) as conn:
        languages = document_languages(conn)
        labelled = [(c, case_class(c, languages)) for c in cases]
        counted = conn.execute("SELECT count(*) FROM chunk_multilingual").fetchone()[0]
        print(f"{args.eval_set}, {args.split} split: {len(labelled)} answerable cases; {counted} multilingual vectors")
        print("floor | class | n ev@3 ev@10 nDCG@10 | ms/search")
        for floor in args.floors.split(","):  # a warm-up pass each: model loads and plans out of the timing
            run(conn, embedder, labelled[:5], floor)
        for floor in args.floors.split(","):
            ranks, ms = run(conn, embedder, labelled, floor)
            for label in sorted(ranks, key=lambda s: (s != "all", s)):
                print(f"{floor:>5} | {label:<14} | {figures(ranks[label])} | {ms:.0f}" if label == "all"
                      else f"{floor:>5} | {label:<14} | {figures(ranks[label])} |")


if __name__ == "__main__":
    main()
