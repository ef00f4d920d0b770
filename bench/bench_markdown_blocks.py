"""Long Markdown blocks before and after parsing/markdown_blocks.py sets their split lines apart.

python-markdown re-reads a block's remainder after every heading, rule, setext underline, link
definition and end of indented code in it, so such blocks cost time growing with the square of
their length (the shapes: bench/markdown_shapes.py, which the tests check too). For each shape,
at --entries entries: python-markdown on the text as it is ("before", the former cost), the
converter both Markdown paths use (linear_markdown: "after"), and the whole direct Markdown
parse; then the
after figure at --big-entries entries (no "before": it is quadratic), and prose of the same size
as the baseline. Best of --rounds, in this process.

    python bench/bench_markdown_blocks.py
    python bench/bench_markdown_blocks.py --entries 4000 --big-entries 32000
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from markdown_shapes import LONG_BLOCKS  # bench/, this script's folder, is on sys.path

PROSE = "prose (baseline)"
SHAPES = {**LONG_BLOCKS, PROSE: lambda i: f"Plain words of entry {i} in one paragraph.\n"}


def best(fn, text: str, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn(text)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=2000, help="entries per shape for before/after")
    parser.add_argument("--big-entries", type=int, default=16000, help="entries per shape, after only")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    import markdown

    from rag_pipeline.parsing.config import ParseLimits
    from rag_pipeline.parsing.markdown_blocks import linear_markdown
    from rag_pipeline.parsing.markdown_direct import parse_markdown_file
    from rag_pipeline.parsing.office.markdown_tables import normalize_markdown

    def render(text: str) -> str:
        return markdown.markdown(text, extensions=["tables", "fenced_code"])

    def linear(text: str) -> str:
        return linear_markdown(["tables", "fenced_code"]).convert(text)

    print(f"load average {os.getloadavg()[0]:.1f}; best of {args.rounds}")
    print(f"{'shape':<30}{'KB':>7}{'before s':>10}{'after s':>9}{'ratio':>8}{'parse s':>9}"
          f"{'KB big':>8}{'after s':>9}{'/ prose':>9}")
    prose_big = None
    rows = []
    for name, entry in SHAPES.items():
        text = normalize_markdown("".join(entry(i) for i in range(args.entries)))
        big = normalize_markdown("".join(entry(i) for i in range(args.big_entries)))
        assert linear(text) == render(text), name
        before = best(render, text, args.rounds)
        after = best(linear, text, args.rounds)
        parse = best(lambda t: parse_markdown_file(t.encode(), name="b.md", limits=ParseLimits()), text, args.rounds)
        after_big = best(linear, big, args.rounds)
        rows.append((name, len(text) / 1024, before, after, parse, len(big) / 1024, after_big))
        if name == PROSE:
            prose_big = after_big
    for name, kb, before, after, parse, kb_big, after_big in rows:
        ratio = after_big / prose_big if prose_big else float("nan")
        print(f"{name:<30}{kb:>7.0f}{before:>10.2f}{after:>9.2f}{before / after:>7.1f}x{parse:>9.2f}"
              f"{kb_big:>8.0f}{after_big:>9.2f}{ratio:>8.1f}x")


if __name__ == "__main__":
    main()
