"""Markdown whose openers python-markdown chases to the end (parsing/markdown_openers.py).

Each hostile shape repeats one unit to a paragraph of --chars characters and is parsed the way
a sync parses a Markdown file (`parse_markdown_file`: decode, normalise, python-markdown, the
direct walk). "before" parses the same text with the escaping switched off (the former code),
at --before-chars, since the former cost is quadratic (a shape at 64,000 characters took
minutes); "after" parses it with the escaping at both sizes. Prose of the same length is the
baseline of each row, measured in the same run. The corpus' Markdown files are parsed too, to
show what the read count costs a document that needs no escaping.

    python bench/bench_markdown_openers.py [--chars 64000] [--before-chars 16000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# one unit per shape, repeated: each opener in it has no closer (or a far one)
HOSTILE_SHAPES = {
    "unclosed [": "[",
    "unclosed ![": "![",
    "footnote-like [^": "[^",
    "nested [[a]": "[[a]",
    "link text, unclosed (": "[a](",
    "brackets closed far away": None,  # "[" * n + "]" * n, built below
    "CDATA openers": "<![CDATA[ ",
    "tag starts without >": "x <a ",
    "autolink starts": "<http://",
    "tag starts on lines": "<a\n",
    "tag starts after a backslash": "\\<a x ",
    "backticks ``a`": "``a`",
    "backticks ```a``": "```a``",
    "list item of [": None,  # "- " + "[" * n
    "paragraphs comparing a<b, no >": "When a<b the archive keeps both.\n\n",  # not an attack: prose
}
PROSE_UNIT = "word "


def hostile_text(shape: str, chars: int) -> str:
    """The shape's paragraph, about `chars` characters long."""
    if shape == "brackets closed far away":
        return "[" * (chars // 2) + "]" * (chars // 2)
    if shape == "list item of [":
        return "- " + "[" * chars
    unit = HOSTILE_SHAPES[shape]
    return unit * max(1, chars // len(unit))


def _parse_seconds(text: str, *, escaping: bool) -> float:
    from rag_pipeline.parsing.config import ParseLimits
    from rag_pipeline.parsing.markdown_direct import parse_markdown_file
    from rag_pipeline.parsing.office import markdown_tables

    original = markdown_tables.openers_escaped
    if not escaping:
        markdown_tables.openers_escaped = lambda text: text
    try:
        started = time.perf_counter()
        try:
            parse_markdown_file(text.encode("utf-8"), name="bench.md", limits=ParseLimits(ocr=False))
        except Exception as error:  # noqa: BLE001 -- a refusal is a result here, printed with its time
            print(f"    ({type(error).__name__}: {str(error)[:80]})")
        return time.perf_counter() - started
    finally:
        markdown_tables.openers_escaped = original


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chars", type=int, default=64_000)
    parser.add_argument("--before-chars", type=int, default=16_000)
    args = parser.parse_args()

    _parse_seconds("# warm up\n\ntext [a](b) `c`", escaping=True)
    small_prose = _parse_seconds(PROSE_UNIT * (args.before_chars // len(PROSE_UNIT)), escaping=True)
    large_prose = _parse_seconds(PROSE_UNIT * (args.chars // len(PROSE_UNIT)), escaping=True)
    print(f"prose: {small_prose:.3f} s at {args.before_chars:,} chars, {large_prose:.3f} s at {args.chars:,}")
    print(f"| shape | before, {args.before_chars:,} chars | after, {args.before_chars:,} | after, {args.chars:,} "
          f"| after / prose, {args.chars:,} |")
    print("|---|---:|---:|---:|---:|")
    for shape in HOSTILE_SHAPES:
        before = _parse_seconds(hostile_text(shape, args.before_chars), escaping=False)
        after_small = _parse_seconds(hostile_text(shape, args.before_chars), escaping=True)
        after_large = _parse_seconds(hostile_text(shape, args.chars), escaping=True)
        print(f"| {shape} | {before:.2f} s | {after_small:.3f} s | {after_large:.3f} s | "
              f"{after_large / large_prose:.1f}x |", flush=True)

    corpus = sorted((Path(__file__).resolve().parents[2] / "shared" / "corpus" / "docs").rglob("*.md"))
    for path in corpus:
        text = path.read_text(encoding="utf-8")
        from rag_pipeline.parsing.markdown_openers import openers_escaped

        started = time.perf_counter()
        unchanged = openers_escaped(text) is text
        counted = time.perf_counter() - started
        parsed = _parse_seconds(text, escaping=True)
        print(f"corpus {path.name}: {len(text):,} chars, unchanged {unchanged}, read count {counted * 1000:.1f} ms "
              f"of a {parsed * 1000:.0f} ms parse ({counted / parsed:.1%})")


if __name__ == "__main__":
    main()
