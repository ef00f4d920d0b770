"""False positives of secret redaction on the shared corpus: which rule fired, how often, on which files.

The corpus (`../shared/corpus`, or `--corpus` / `RAG_CORPUS_DIR`) holds public documents with no
credentials in them, so every redaction here is a false positive unless its context shows a real
secret. Each supported document under `docs/` goes through `parse_document` and then through the
safety passes exactly as the sync runs them (`make_safe`: elements joined with their boundaries);
the SciFact abstracts under `qa/` (`corpus.jsonl`) add 5,000 short scientific texts. Scanned PDFs
need OCR and are skipped unless `--ocr` is given.

Per rule (the redactor function and the kind it counted) it prints how many spans fired and on
which files; `--show N` prints up to N hits per rule with their context (from a per-element
replay of the passes), so a rule that fires on ordinary text can be read and fixed. The total line
counts what `make_safe` removed, the figure the sync records.

    python bench/bench_redaction.py               # docs without OCR + SciFact abstracts
    python bench/bench_redaction.py --show 5 --ocr
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag_pipeline.cleaning.clean import make_safe
from rag_pipeline.cleaning.safety import neutralise_controls
from rag_pipeline.cleaning.safety.pipeline import _REDACTORS
from rag_pipeline.parsing import SUPPORTED_SUFFIXES, ParseError, parse_document
from rag_pipeline.parsing.types import Element

CONTEXT = 60


def corpus_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    if os.environ.get("RAG_CORPUS_DIR"):
        return Path(os.environ["RAG_CORPUS_DIR"])
    return Path(__file__).resolve().parents[2] / "shared" / "corpus"


def documents(corpus: Path, ocr: bool):
    """(name, elements) for each parsable document, then each SciFact abstract."""
    for path in sorted((corpus / "docs").rglob("*")):
        if not path.is_file() or path.suffix.lower() not in SUPPORTED_SUFFIXES:
            continue
        if path.parent.name == "scanned" and not ocr:
            continue
        try:
            parsed = parse_document(path.read_bytes(), path.name)
        except ParseError as exc:
            print(f"  skipped {path.relative_to(corpus)}: {exc}", file=sys.stderr)
            continue
        yield str(path.relative_to(corpus)), parsed.elements
    for path in sorted((corpus / "qa").rglob("corpus.jsonl")):
        name = str(path.relative_to(corpus))
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                record = json.loads(line)
                elements = [Element("paragraph", t) for t in (record.get("title"), record.get("text")) if t]
                yield f"{name}#{record.get('_id')}", elements


def _changed_region(before: str, after: str) -> tuple[str, str]:
    """The differing middle of two texts (common prefix and suffix cut), with context."""
    prefix = 0
    limit = min(len(before), len(after))
    while prefix < limit and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and before[-1 - suffix] == after[-1 - suffix]:
        suffix += 1
    start = max(0, prefix - CONTEXT)
    return before[start : len(before) - suffix + CONTEXT], after[start : len(after) - suffix + CONTEXT]


def replay(text: str) -> list[tuple[str, str, int, str]]:
    """Each redactor in the sync's order over one element: (rule, kind, spans, context)."""
    text, _ = neutralise_controls(text)
    hits = []
    for redactor in _REDACTORS:
        counts: Counter[str] = Counter()
        after = redactor(text, counts)
        for kind, n in counts.items():
            if n:
                before_ctx, after_ctx = _changed_region(text, after)
                hits.append((redactor.__name__, kind, n, f"{before_ctx!r}\n        -> {after_ctx!r}"))
        text = after
    return hits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus")
    parser.add_argument("--ocr", action="store_true", help="include scanned PDFs (OCR, slow)")
    parser.add_argument("--show", type=int, default=3, help="hits with context printed per rule")
    args = parser.parse_args()
    corpus = corpus_dir(args.corpus)

    per_rule: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)  # (rule, kind) -> file -> spans
    examples: dict[tuple[str, str], list[str]] = defaultdict(list)
    totals: Counter[str] = Counter()
    files: set[str] = set()
    texts = characters = 0
    redacting = 0.0
    started = time.perf_counter()
    for name, elements in documents(corpus, args.ocr):
        file = name.split("#", 1)[0]
        files.add(file)
        before = time.perf_counter()
        _, counts = make_safe(elements)
        redacting += time.perf_counter() - before
        totals.update({k: v for k, v in counts.items() if k.startswith("secret:")})
        texts += 1
        characters += sum(len(e.text) for e in elements)
        if not any(k.startswith("secret:") for k in counts):
            continue
        for element in elements:
            for rule, kind, n, context in replay(element.text):
                per_rule[(rule, kind)][file] += n
                if len(examples[(rule, kind)]) < args.show:
                    examples[(rule, kind)].append(f"      {name}: {context}")
    seconds = time.perf_counter() - started

    print(f"corpus {corpus}: {len(files)} files, {texts} documents, {characters:,} characters, {seconds:.1f} s"
          f" ({redacting:.1f} s in make_safe)")
    print(f"make_safe redacted {sum(totals.values())} spans: {dict(sorted(totals.items())) or 'none'}")
    if not per_rule:
        print("no rule fired (per-element replay)")
    for (rule, kind), by_file in sorted(per_rule.items()):
        print(f"  {rule} / {kind}: {sum(by_file.values())} spans in {len(by_file)} files")
        for file, n in by_file.most_common():
            print(f"    {n:5d}  {file}")
        for example in examples[(rule, kind)]:
            print(example)


if __name__ == "__main__":
    main()
