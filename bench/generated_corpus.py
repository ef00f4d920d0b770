"""A generated Markdown corpus of any size, from real text, and the incremental scenarios the
scale benchmarks replay on it (no-op, one edited section, deleted files).

The text is real: every section is a BEIR SciFact abstract (../shared/corpus/qa/scifact_beir), so
chunk lengths, vocabulary and token counts are those of real prose, not of repeated filler. The
same arguments always give the same files, byte for byte, so the project and a peer (LangChain)
index exactly the same corpus and the figures of separate runs can be compared.

    python bench/generated_corpus.py /tmp/gen --docs 1000 --sections 3
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
from collections.abc import Iterator
from pathlib import Path

SCIFACT = Path(os.environ.get("RAG_CORPUS_DIR", Path(__file__).resolve().parents[2] / "shared" / "corpus")) / "qa" / "scifact_beir" / "corpus.jsonl"
EDIT_MARKER = "Revised after review:"


def abstracts(path: Path = SCIFACT) -> list[tuple[str, str]]:
    """(title, text) of every SciFact abstract with text, in file order."""
    if not path.is_file():
        raise SystemExit(f"{path}: the SciFact corpus is missing; set RAG_CORPUS_DIR to the shared corpus folder")
    found = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            if doc.get("text", "").strip():
                found.append((doc.get("title", "").strip() or "Untitled", " ".join(doc["text"].split())))
    return found


def _sections(pool: list[tuple[str, str]], seed: int) -> Iterator[tuple[str, str]]:
    """An endless, seeded walk over the abstracts: documents larger than the pool reuse text in a
    different order (so a 10,000-document corpus still holds distinct documents)."""
    rng = random.Random(seed)
    for round_no in itertools.count():
        order = list(range(len(pool)))
        rng.shuffle(order)
        for i in order:
            title, text = pool[i]
            yield (title, text) if round_no == 0 else (title, f"{text} (Series {round_no}.)")


def document_name(index: int) -> str:
    return f"{index // 1000:02d}/doc-{index:05d}.md"


def write_corpus(target: Path, docs: int, sections: int = 3, seed: int = 0) -> list[Path]:
    """Write `docs` Markdown documents of `sections` sections each under `target` (in folders of
    1,000); returns their paths in order."""
    pool = abstracts()
    walk = _sections(pool, seed)
    paths = []
    for index in range(docs):
        parts = [f"# Report {index:05d}: {next(walk)[0]}", ""]
        for number, (title, text) in enumerate(itertools.islice(walk, sections), 1):
            parts += [f"## {number}. {title}", "", text, ""]
        path = target / document_name(index)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(parts), encoding="utf-8")
        paths.append(path)
    return paths


def edit_one_section(target: Path, index: int = 0) -> Path:
    """Change the text of the last section of one document (one sentence appended): exactly one
    section differs, so only the chunks of that section should be re-encoded."""
    path = target / document_name(index)
    text = path.read_text(encoding="utf-8").rstrip("\n")
    path.write_text(f"{text} {EDIT_MARKER} the effect size was re-estimated.\n", encoding="utf-8")
    return path


def delete_documents(target: Path, count: int = 10, start: int = 1) -> list[Path]:
    """Delete `count` documents (from `start` on, leaving the edited one alone)."""
    gone = [target / document_name(i) for i in range(start, start + count)]
    for path in gone:
        path.unlink()
    return gone


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", type=Path)
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--sections", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    paths = write_corpus(args.target, args.docs, args.sections, args.seed)
    size = sum(p.stat().st_size for p in paths)
    print(f"{len(paths)} documents, {args.sections} sections each, {size / 1e6:.1f} MB under {args.target}")


if __name__ == "__main__":
    main()
