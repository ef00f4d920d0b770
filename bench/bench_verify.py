"""Verification time per claim (issue 24: target <= 20 ms per claim on the packaged model, beyond
the model load) and, given an evaluation set with answer cases, the checker's metrics on its
report split.

    python bench/bench_verify.py --config CONFIG [--claims 200] [--eval-set SET.yaml]

Against an index already synced by CONFIG: one logged search per question of a small fixed list
(as all-staff), then answers of `--claims` claims in total, each claim citing the search's
results 1 to 3 (the claim text is the first sentence of its first cited chunk, with a figure
changed in every other claim, so both the exact-field rule and the support score run). Timed:
`verify(..., record=False)` (the checks; recording adds one INSERT) and `verify(...)` recording.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

QUESTIONS = ("Who approves a business trip abroad?", "What is the hotel cap in Berlin?",
             "How long must passwords be?", "How many days a week may I work from home?",
             "What is the deadline for receipts after a trip?", "Who issues access badges?")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True)
    parser.add_argument("--claims", type=int, default=200)
    parser.add_argument("--eval-set", help="an evaluation set with answer cases: metrics on its report split")
    args = parser.parse_args()

    from rag_pipeline.answers.draft import Citation, Claim, Draft
    from rag_pipeline.answers.verify import verify
    from rag_pipeline.config import load_config
    from rag_pipeline.embedding import embedder_for
    from rag_pipeline.retrieval.search import search
    from rag_pipeline.store import database
    from rag_pipeline.sync.context import prepare_database

    config = load_config(Path(args.config))
    started = time.perf_counter()
    model = embedder_for(config.embedding)
    model.encode(["warm up"])
    print(f"model load {time.perf_counter() - started:.2f} s")
    with database.connect(prepare_database(config)) as conn:
        drafts = []
        for question in QUESTIONS:
            hits = search(conn, model, question, ["all-staff"], k=5, user="bench")
            claims = []
            for i in range(args.claims // len(QUESTIONS)):
                cited = hits[i % len(hits): i % len(hits) + 1 + i % 3] or hits[:1]
                sentence = re.split(r"(?<=[.!?])\s", " ".join(cited[0].text.split()))[0][:300]
                if i % 2:
                    sentence = re.sub(r"\d+", lambda m: str(int(m.group()) + 7), sentence, count=1)
                claims.append(Claim(sentence, tuple(Citation(h.chunk_id) for h in cited)))
            drafts.append(Draft(hits.log_id, tuple(claims)))
        total = sum(len(d.claims) for d in drafts)
        for record in (False, True):
            started = time.perf_counter()
            statuses: dict[str, int] = {}
            for draft in drafts:
                for claim in verify(conn, model, draft, user="bench", record=record).claims:
                    statuses[claim.status] = statuses.get(claim.status, 0) + 1
            spent = time.perf_counter() - started
            print(f"{'recorded' if record else 'judged only'}: {total} claims in {spent:.2f} s = "
                  f"{1000 * spent / total:.1f} ms per claim ({statuses})")
        if args.eval_set:
            from rag_pipeline.answers import support
            from rag_pipeline.evaluation.answer_cases import answer_metrics, load_answer_cases, run_answer_cases
            from rag_pipeline.store.search import index_model_id

            cases = [c for c in load_answer_cases(Path(args.eval_set)) if not c.in_calibration_split]
            threshold = support.threshold_for(conn, index_model_id(conn))[0]
            results = run_answer_cases(conn, model, cases, k=config.evaluation.k, threshold=threshold)
            print(f"report split ({len(cases)} answer cases, threshold {threshold.value:.3f} from {threshold.source}):")
            for name, value in answer_metrics(results).items():
                print(f"  {name} {value:g}")


if __name__ == "__main__":
    main()
