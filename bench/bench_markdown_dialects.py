"""What reading documentation-site Markdown as its site shows it costs (parsing/markdown_dialects.py).

Every Markdown file goes through `as_site_shows` before python-markdown reads it: a file without
dialect markup costs one regex search, one with it a pass over its lines. Measured, in one run:
- real files: every Markdown file found under the given folders (default: the shared corpus,
  evalsets, /usr/share/doc and the installed packages' documentation), the whole parse
  (`parse_markdown_file`) with the pass and with it replaced by the identity, and how many
  files read differently;
- hostile shapes, each about --mb megabytes: many admonitions, nesting 3,000 deep, unclosed
  containers, a million footnote marks, unclosed inline openers on one line; seconds per MB of
  the pass alone against plain prose of the same size.

    python bench/bench_markdown_dialects.py [--mb 2] [--repeat 3] [FOLDER ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rag_pipeline.parsing import markdown_direct  # noqa: E402
from rag_pipeline.parsing.config import ParseLimits  # noqa: E402
from rag_pipeline.parsing.markdown_dialects import as_site_shows  # noqa: E402
from rag_pipeline.parsing.types import ParseError  # noqa: E402

FOLDERS = [ROOT.parent / "shared" / "corpus", ROOT / "evalsets", Path("/usr/share/doc"),
           Path(sys.prefix) / "lib"]
PROSE = "The travel policy applies to every business trip abroad; hotels are paid up to EUR 140 a night.\n\n"


def shapes(size: int) -> dict[str, str]:
    def fill(unit: str) -> str:
        return unit * max(1, size // len(unit))

    return {
        "prose (baseline)": fill(PROSE),
        "admonitions": fill('!!! note "Title"\n    body words of the note\n\n'),
        "nested admonitions (3,000 deep)": "".join("    " * d + "!!! note\n" for d in range(3_000)),
        "unclosed containers": fill(":::tip\nx\n"),
        "footnote marks": fill("word[^1] ") + "\n\n[^1]: the note\n",
        "unclosed ~~ on one line": "[^1]\n" + fill("~~x "),
        "MyST directives": fill("```{note}\nA note.\n```\n\n"),
        "content tabs": fill('=== "Linux"\n\n    Run it.\n\n'),
    }


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def real_files(folders: list[Path], repeat: int) -> None:
    files = sorted({p for folder in folders if folder.exists() for p in folder.rglob("*.md") if p.is_file()})
    with_pass = without = 0.0
    changed = parsed = 0
    size = 0
    for path in files:
        data = path.read_bytes()
        try:
            markdown_direct.parse_markdown_file(data, name=path.name, limits=ParseLimits())
        except ParseError:
            continue
        parsed += 1
        size += len(data)
        text = data.decode("utf-8", errors="replace")
        changed += as_site_shows(text) != text
        with_pass += best(lambda d=data, n=path.name: markdown_direct.parse_markdown_file(d, name=n, limits=ParseLimits()), repeat)
        original = markdown_direct.as_site_shows
        markdown_direct.as_site_shows = lambda t: t
        try:
            without += best(lambda d=data, n=path.name: markdown_direct.parse_markdown_file(d, name=n, limits=ParseLimits()), repeat)
        finally:
            markdown_direct.as_site_shows = original
    print(f"real files: {parsed} parsed ({size / 1e6:.1f} MB), {changed} with dialect markup")
    print(f"  whole parse with the pass {with_pass:.2f} s, without {without:.2f} s, ratio {with_pass / max(without, 1e-9):.3f}")


def hostile(mb: float, repeat: int) -> None:
    print(f"\n{'shape':34} {'MB':>6} {'s':>7} {'s/MB':>7} {'/ prose':>8}")
    per_mb_prose = None
    for name, text in shapes(int(mb * 1e6)).items():
        seconds = best(lambda t=text: as_site_shows(t), repeat)
        per_mb = seconds / (len(text) / 1e6)
        per_mb_prose = per_mb_prose or per_mb
        print(f"{name:34} {len(text) / 1e6:6.2f} {seconds:7.3f} {per_mb:7.3f} {per_mb / per_mb_prose:8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--mb", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    real_files(args.folders or FOLDERS, args.repeat)
    hostile(args.mb, args.repeat)


if __name__ == "__main__":
    main()
