"""Time of the clean step's character pass (`neutralise_controls`: escapes, controls, invisible
characters, NFC, ligatures) on hostile text, against prose of the same length in the same run.

Every parsed document and every question goes through it, so a shape that costs more than its
length is a way to stall a sync. Shapes: runs of each context rule's characters (variation
selectors after letters, Hangul fillers among jamo, Mongolian selectors, joiners), soft hyphens,
decomposed accents, ligatures, number forms (fractions, powers, subscripts: number_forms.py); the baseline is SciFact abstracts (real prose, a few accents).

    python bench/bench_clean_controls.py [--chars 4000000] [--repeat 3] [--tree OTHER_CHECKOUT]

Printed per shape: seconds (best of --repeat), characters removed, and the ratio to prose.
`--tree` imports the pass from another checkout (the code before a change) instead.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "qa" / "scifact_beir" / "corpus.jsonl"
SHAPES = {
    "soft hyphens in words": "compli\u00adance ",
    "variation selector after each letter": "a\ufe00",
    "joiner then emoji selector": "a\u200d\ufe0f",
    "jamo with fillers (kept)": "\u1100\u115f",
    "fillers only": "\u115f",
    "Mongolian selectors doubled": "\u1820\u180b\u180b",
    "bidi marks in words": "pass\u200fword ",
    "decomposed accents (NFC)": "Mu\u0308ller cafe\u0301 ",
    "ligatures": "o\ufb03ce \ufb01nal ",
    "full-width letters and hyphens": "\uff30\uff24\uff26\u2011\uff11\uff12 ",
    "tag characters": "x\U000e0041\U000e0042",
    "number forms (safety6)": "1\u00bd 3\u20448 10\u2076 H\u2082O \u216b ",
    "superscript run": "10\u2070\u2071\u2074\u2075",
}


def prose(chars: int) -> str:
    """SciFact abstracts, joined, to `chars` characters."""
    texts, size = [], 0
    with CORPUS.open(encoding="utf-8") as f:
        for line in f:
            text = json.loads(line).get("text", "")
            texts.append(text)
            size += len(text) + 1
            if size >= chars:
                break
    return "\n".join(texts)[:chars]


def best(text: str, repeat: int) -> tuple[float, int]:
    from rag_pipeline.cleaning.safety import neutralise_controls

    times, removed = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        _, removed = neutralise_controls(text)
        times.append(time.perf_counter() - started)
    return min(times), removed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=4_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tree", type=Path, default=ROOT, help="checkout whose rag_pipeline is timed")
    args = parser.parse_args()
    sys.path.insert(0, str(args.tree.resolve()))
    base, _ = best(prose(args.chars), args.repeat)
    print(f"{'shape':40} {'s':>8} {'removed':>10} {'/ prose':>8}")
    print(f"{'prose (SciFact)':40} {base:8.3f} {0:10,} {1.0:8.1f}")
    for name, unit in SHAPES.items():
        text = (unit * (args.chars // len(unit) + 1))[: args.chars]
        seconds, removed = best(text, args.repeat)
        print(f"{name:40} {seconds:8.3f} {removed:10,} {seconds / base:8.1f}")


if __name__ == "__main__":
    main()
