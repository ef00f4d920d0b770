"""Time of the rules that read user text on hostile input: the citation checker's rules on a
claim (issue 24: "a 10 MB answer, 10,000 claims" is refused by its limits, so the worst an
accepted answer can hold is claims of MAX_CLAIM_CHARS built to make a rule backtrack), and the
search's reading of a query (section references, rerank features) at MAX_QUERY_CHARS.

    python bench/bench_hostile_text.py [--chars 4000] [--against TREE] [--repeat 3]

For each shape (a 4,000-character claim of one repeated unit: "a/", "not ", "1-", ...) the rules
verify runs on a claim and its cited passage without the model: exact fields (`extract`, `facts`,
`missing`), the figure-role rule (`misplaced`), the polarity check (`mismatch`) and the claim's
language; then the same shapes as a query of 2,000 characters through `reference_keys` and
`query_features`. Printed: milliseconds per claim, best of `--repeat`, and the ratio to ordinary prose of
the same length (SciFact abstracts) measured in the same run. A shape far above prose is a rule
whose cost grows faster than the text. `--against TREE` runs the same in another checkout (the
code before a change) in a subprocess and prints both.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
UNITS = ("a/", "a-", "1-", "not ", "not un", "x1.", "EUR 1 ", "1\u00a0", "(1)", "w", "A", "1% ", "Zorb ", "1. ledna 2026 ",
         "version 1.2.3 ", "§ 1, ", "see 1.2.3 ")


def measure(root: Path, chars: int, repeat: int) -> dict[str, float]:
    """Milliseconds per text of every rule, per shape and kind (claim, query), with the tree at
    `root` imported."""
    sys.path.insert(0, str(root))
    from rag_pipeline.answers import crosslingual, fields, polarity, roles
    from rag_pipeline.retrieval import rerank, section_refs
    from rag_pipeline.retrieval.search import MAX_QUERY_CHARS

    def claim_rules(claim: str) -> None:
        found = fields.extract(claim)
        fields.missing(claim, found, fields.facts(claim))
        roles.misplaced(claim, claim)
        polarity.mismatch(claim, [claim])
        crosslingual.claim_language.__wrapped__(claim)

    def query_rules(query: str) -> None:
        section_refs.reference_keys(query)
        rerank.query_features(query)

    abstracts = [json.loads(line)["text"] for line in
                 (CORPUS / "qa" / "scifact_beir" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:50]]
    claim_rules("warm up the language profiles and the patterns of the claim")
    timed = {}
    for kind, rules, length in (("claim", claim_rules, chars), ("query", query_rules, MAX_QUERY_CHARS)):
        shapes = {"prose": " ".join(abstracts)[:length], **{repr(unit): (unit * length)[:length] for unit in UNITS}}
        for name, text in shapes.items():
            best = float("inf")
            for _ in range(repeat):
                started = time.perf_counter()
                rules(text)
                best = min(best, time.perf_counter() - started)
            timed[f"{kind} {name}"] = best * 1000
    return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chars", type=int, default=4000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout to time the same way")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # the subprocess's output
    parser.add_argument("--tree", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.json:
        print(json.dumps(measure(args.tree, args.chars, args.repeat)))
        return
    runs = {"this tree": measure(ROOT, args.chars, args.repeat)}
    if args.against:
        out = subprocess.run([sys.executable, __file__, "--json", "--tree", str(args.against), "--chars", str(args.chars),
                              "--repeat", str(args.repeat)], check=True, capture_output=True, text=True).stdout
        runs[str(args.against)] = json.loads(out.strip().splitlines()[-1])
    print(f"rules on one claim of {args.chars} characters (its passage the same text) and one query of the "
          f"longest length, ms, best of {args.repeat}")
    print(f"{'shape':<26}" + "".join(f"{name[-24:]:>26}" for name in runs))
    for shape in runs["this tree"]:
        cells = []
        for timed in runs.values():
            ms, prose = timed[shape], timed[shape.split(" ")[0] + " prose"]
            cells.append(f"{ms:10.1f} ({ms / prose:5.1f}x prose)")
        print(f"{shape:<26}" + "".join(f"{c:>26}" for c in cells))
    for name, timed in runs.items():
        for kind in ("claim", "query"):
            worst = max((ms, shape) for shape, ms in timed.items() if shape.startswith(kind))
            print(f"worst {kind} shape, {name}: {worst[1]} {worst[0]:.1f} ms ({worst[0] / timed[kind + ' prose']:.1f}x prose)")

if __name__ == "__main__":
    main()
