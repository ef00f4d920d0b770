"""Language detection per document: langdetect's own Detector against the project's FastDetector
(rag_pipeline/common/language_detection.py), on the samples the chunk step takes
(`text_search._sample`: up to 6,000 characters) of real documents, taking turns, best of
`--rounds`. Prints ms per document for both, the ratio, and whether every document got the
same language and probabilities from both (it must: the index recorded languages with
langdetect itself).

    python bench/bench_language_detection.py                  # SciFact reports + evalsets/generalisation
    python bench/bench_language_detection.py --docs 500 --rounds 5
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import generated_corpus
from langdetect.detector import Detector

from rag_pipeline.common.language_detection import _factory, new_detector
from rag_pipeline.store.text_search import _sample

ROOT = Path(__file__).resolve().parent.parent


def documents(count: int) -> list[str]:
    """`count` report-sized texts of three SciFact abstracts each (English, as the generated
    benchmark corpus), then every text file of evalsets/generalisation (Czech, German, French,
    English), each as the chunk step samples it."""
    abstracts = [f"{title}\n\n{text}" for title, text in generated_corpus.abstracts()[: 3 * count]]
    texts = ["\n\n".join(abstracts[i: i + 3]) for i in range(0, len(abstracts), 3)]
    folder = ROOT / "evalsets" / "generalisation" / "docs"
    texts += [p.read_text(encoding="utf-8", errors="replace") for p in sorted(folder.iterdir()) if p.is_file()]
    return [_sample(t) for t in texts]


def detect(make: type | None, texts: list[str]) -> tuple[float, list]:
    """Seconds for all texts, and each one's (language, probability) list."""
    found = []
    started = time.perf_counter()
    for text in texts:
        detector = Detector(_factory()) if make is Detector else new_detector()
        detector.append(text)
        try:
            found.append([(p.lang, p.prob) for p in detector.get_probabilities()])
        except Exception as error:  # noqa: BLE001 -- langdetect's "no features": compared like a result
            found.append(repr(error))
    return time.perf_counter() - started, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=200, help="SciFact reports (3 abstracts each)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    texts = documents(args.docs)
    _factory()  # profiles load once, outside the timing
    best = {"langdetect": float("inf"), "fast": float("inf")}
    results = {}
    for _ in range(args.rounds):
        for name, make in (("langdetect", Detector), ("fast", None)):
            seconds, results[name] = detect(make, texts)
            best[name] = min(best[name], seconds)
    chars = sum(len(t) for t in texts) / len(texts)
    print(f"{len(texts)} documents, {chars:,.0f} characters sampled on average, best of {args.rounds}; "
          f"load average {os.getloadavg()[0]:.1f}")
    for name, seconds in best.items():
        print(f"  {name:<10} {1000 * seconds / len(texts):6.2f} ms per document")
    print(f"  fast / langdetect: {best['fast'] / best['langdetect']:.2f}x")
    same = sum(a == b for a, b in zip(results["langdetect"], results["fast"], strict=True))
    print(f"  same languages and probabilities: {same} of {len(texts)}")


if __name__ == "__main__":
    main()
