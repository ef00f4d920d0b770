"""Verification time per claim (issue 24: target <= 20 ms per claim on the packaged model, beyond
the model load) and, given an evaluation set with answer cases, the checker's metrics on its
report split.

    python bench/bench_verify.py --config CONFIG [--claims 200] [--eval-set SET.yaml ...]
        [--against TREE] [--rounds 2] [--failures]

Against an index already synced by CONFIG: one logged search per question of a small fixed list
(as all-staff), then answers of `--claims` claims in total, each claim citing the search's
results 1 to 3 (the claim text is the first sentence of its first cited chunk, with a figure
changed in every other claim, so both the exact-field rule and the support score run). Timed:
`verify(..., record=False)` (the checks; recording adds one INSERT) and `verify(...)` recording.

`--against TREE`: the same timing with another checkout of the project (the code before a change,
e.g. /work/main), in a subprocess, alternating with this tree's for `--rounds` rounds so that both
see the same machine load; the ratio is printed. `--failures`: every report-split claim or
citation that did not get its expected status, with the reason.
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
    parser.add_argument("--eval-set", nargs="*", default=[], help="evaluation sets with answer cases: metrics on each one's report split")
    parser.add_argument("--against", help="another checkout of the project to time the same way (before/after)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--failures", action="store_true", help="print the report split's failing claims")
    parser.add_argument("--timing-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.against:
        compare(args)
        return

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
        for record in ((False,) if args.timing_only else (False, True)) if total else ():  # --claims below one per question: no timing
            started = time.perf_counter()
            statuses: dict[str, int] = {}
            for draft in drafts:
                for claim in verify(conn, model, draft, user="bench", record=record).claims:
                    statuses[claim.status] = statuses.get(claim.status, 0) + 1
            spent = time.perf_counter() - started
            print(f"{'recorded' if record else 'judged only'}: {total} claims in {spent:.2f} s = "
                  f"{1000 * spent / total:.1f} ms per claim ({statuses})")
        for path in args.eval_set:
            report(conn, model, config, Path(path), args.failures)


def report(conn, model, config, path: Path, failures: bool) -> None:
    from rag_pipeline.answers import support
    from rag_pipeline.evaluation.answer_cases import answer_metrics, load_answer_cases, run_answer_cases
    from rag_pipeline.store.search import index_model_id

    cases = [c for c in load_answer_cases(path) if not c.in_calibration_split]
    threshold = support.threshold_for(conn, index_model_id(conn))[0]
    results = run_answer_cases(conn, model, cases, k=config.evaluation.k, threshold=threshold)
    print(f"{path.name}: report split ({len(cases)} answer cases, threshold {threshold.value:.3f} from {threshold.source}):")
    for name, value in answer_metrics(results).items():
        print(f"  {name} {value:g}")
    for result in results if failures else ():
        for claim in result.claims:
            if claim["status"] != claim["expected"] or any(x["expected"] not in (None, x["status"]) for x in claim["citations"]):
                print(f"  FAILED {result.id}: expected {claim['expected']}, got {claim['status']}: {claim['text']}")
                for x in claim["citations"]:
                    print(f"    chunk {x['chunk_id']}: expected {x['expected']}, got {x['status']}: {x['reason'][:300]}")


def compare(args: argparse.Namespace) -> None:
    """This tree's timing and TREE's, alternating, each in its own process (module docstring)."""
    import subprocess

    here = str(Path(__file__).resolve().parent.parent)
    spent: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(args.rounds):
        for label, tree in (("before", args.against), ("after", here)):
            command = [sys.executable, str(Path(tree) / "bench" / "bench_verify.py"), "--config", args.config,
                       "--claims", str(args.claims)]
            if label == "after":
                command.append("--timing-only")
            found = subprocess.run(command, env={**os.environ, "PYTHONPATH": tree}, capture_output=True, text=True,
                                   check=True).stdout
            line = next(x for x in found.splitlines() if x.startswith("judged only"))
            spent[label].append(float(re.search(r"= ([\d.]+) ms per claim", line).group(1)))
            print(f"{label} ({tree}): {line} (load {os.getloadavg()[0]:.1f})", flush=True)
    before, after = min(spent["before"]), min(spent["after"])
    print(f"best of {args.rounds}: before {before:.1f} ms per claim, after {after:.1f} ms per claim, "
          f"ratio {after / before:.2f}")


if __name__ == "__main__":
    main()
