"""The polarity flag (rag_pipeline/answers/polarity.py) on labelled claim/sentence pairs: the
clause-scope rule beside the rule before it (every cue of the best sentence counts), in the same
run, on the held-out pairs of evalsets/polarity/heldout_polarity.yaml (documents no answer case
cites, labelled before the rule ran on them) and, for comparison, on the sentences the rule was
written on (the answer cases and tests of session 26: a measure of fit, not of generality).

    python bench/bench_polarity.py [--pairs evalsets/polarity/heldout_polarity.yaml] [--failures]

Prints, per rule: the flag's precision and recall (a `reversed` claim must be flagged) and the
share of each class judged right, and the time per pair. No index or model: the flag is a pure
function of the claim and the sentence.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from rag_pipeline.answers import polarity  # noqa: E402
from rag_pipeline.common.yaml_io import load_yaml_file  # noqa: E402

Rule = Callable[[str, Sequence[str]], bool]


def every_cue(claim: str, ranked: Sequence[str]) -> bool:
    """The rule before the clause scope: any cue of the best sentence (of the two best, for a
    negated claim) counts, wherever it stands."""
    if not ranked:
        return False
    if polarity.negated(claim):
        return not any(polarity.negated(polarity._affixed(s, claim)) for s in ranked[:2])
    return polarity.negated(polarity._affixed(ranked[0], claim))


def load(path: Path) -> list[tuple[str, str, str, bool]]:
    """(sentence, claim, class, flag) for every labelled claim of a pairs file."""
    found = load_yaml_file(path, 16 << 20)
    return [(pair["sentence"], claim["text"], claim["class"], bool(claim["flag"]))
            for pair in found["pairs"] for claim in pair["claims"]]


def score(rule: Rule, pairs: list[tuple[str, str, str, bool]], failures: bool, label: str) -> None:
    started = time.perf_counter()
    got = [rule(claim, [sentence]) for sentence, claim, _, _ in pairs]
    spent = time.perf_counter() - started
    flagged = sum(got)
    right_flags = sum(g and want for g, (_, _, _, want) in zip(got, pairs))
    should = sum(want for *_, want in pairs)
    by_class: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for g, (_, _, kind, want) in zip(got, pairs):
        total[kind] += 1
        by_class[kind] += g == want
    precision = right_flags / flagged if flagged else 1.0
    recall = right_flags / should if should else 1.0
    classes = ", ".join(f"{kind} {by_class[kind]}/{total[kind]}" for kind in sorted(total))
    print(f"  {label:<13} precision {precision:.3f}  recall {recall:.3f}  accuracy "
          f"{sum(by_class.values()) / len(pairs):.3f}  ({classes}; {1e6 * spent / len(pairs):.0f} us per pair)")
    for g, (sentence, claim, kind, want) in zip(got, pairs):
        if failures and g != want:
            print(f"    WRONG {kind}: flag {g}, want {want}: {claim!r} on {sentence[:120]!r}")


def fitted_pairs() -> list[tuple[str, str, str, bool]]:
    """The pairs the rule was written on: the tests' sentences (test_polarity.py)."""
    from rag_pipeline_tests.answers import test_polarity as t

    found = []
    for test, kind, want in ((t.test_a_negation_in_a_clause_the_claim_leaves_out_is_no_mismatch, "other-clause", False),
                             (t.test_a_claim_that_takes_up_the_negated_clause_is_a_mismatch, "reversed", True)):
        for mark in test.pytestmark:
            if mark.name == "parametrize":
                found += [(sentence, claim, kind, want) for claim, sentence in mark.args[1]]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", default=str(HERE / "evalsets" / "polarity" / "heldout_polarity.yaml"))
    parser.add_argument("--failures", action="store_true", help="print every pair a rule judged wrong")
    args = parser.parse_args()
    for title, pairs in ((f"held-out: {args.pairs}", load(Path(args.pairs))),
                         ("written on (tests of session 26; fit, not generality)", fitted_pairs())):
        print(f"{title} ({len(pairs)} claims, {sum(p[3] for p in pairs)} to flag)")
        score(every_cue, pairs, args.failures, "every cue")
        score(polarity.mismatch, pairs, args.failures, "clause scope")


if __name__ == "__main__":
    main()
