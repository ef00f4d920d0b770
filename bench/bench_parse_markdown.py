"""Markdown parse cost with and without unstructured (issue 28, item 4), each in a fresh process
(as a parser process or a one-file sync pays it): the import of what parsing one Markdown file
loads, then the parse itself, for the direct parser (parsing/markdown_direct.py) and the former
path (office.parse_with_unstructured), on the corpus' Markdown files, one generated document and
a generated large file, and a changelog of headings and items without blank lines. Prints figures and the ratio former / direct, measured in the same run.

    python bench/bench_parse_markdown.py                 # corpus + generated + 50 MB file
    python bench/bench_parse_markdown.py --big-mb 5      # a smaller large file
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("RAG_CORPUS_DIR", ROOT.parent / "shared" / "corpus"))

_PROBE = """
import json, sys, time
t0 = time.perf_counter()
from rag_pipeline.parsing.config import ParseLimits
if sys.argv[1] == "direct":
    from rag_pipeline.parsing.markdown_direct import parse_markdown_file as parse
    import markdown, lxml.etree  # what its first call loads
else:
    from rag_pipeline.parsing.office import parse_with_unstructured
    from rag_pipeline.parsing.office.fast_heuristics import fast_heuristics
    import unstructured.partition.md  # what its first call loads
    def parse(data, name, limits):
        return parse_with_unstructured(data, name=name, kind="markdown", limits=limits)
imported = time.perf_counter() - t0
out = {"import_s": imported, "parse_s": {}}
for path in sys.argv[2:]:
    data = open(path, "rb").read()
    t = time.perf_counter()
    doc = parse(data, name=path, limits=ParseLimits()) if sys.argv[1] == "direct" else parse(data, path, ParseLimits())
    out["parse_s"][path] = (time.perf_counter() - t, len(doc.elements))
print(json.dumps(out))
"""


def measure(way: str, files: list[Path]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SCARF_NO_ANALYTICS": "true", "DO_NOT_TRACK": "true"}
    done = subprocess.run([sys.executable, "-c", _PROBE, way, *map(str, files)], capture_output=True, text=True,
                          env=env, cwd=ROOT, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--big-mb", type=float, default=50.0, help="size of the generated large file (0: none)")
    parser.add_argument("--changelog-entries", type=int, default=4000,
                        help="entries of a generated changelog without blank lines (headings and items; 0: none)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    import generated_corpus

    with tempfile.TemporaryDirectory() as folder:
        generated = generated_corpus.write_corpus(Path(folder), 1)
        files = sorted((CORPUS / "docs").rglob("*.md")) + generated
        if args.big_mb:
            big = Path(folder) / "big.md"
            section = generated[0].read_text(encoding="utf-8")
            with big.open("w", encoding="utf-8") as out:
                while out.tell() < args.big_mb * 1024 * 1024:
                    out.write(section + "\n")
            files.append(big)
        if args.changelog_entries:  # a block python-markdown re-split at every heading (markdown_blocks.blocks_apart)
            changelog = Path(folder) / "changelog.md"
            changelog.write_text("".join(f"## v1.{i}.0\n- fixed bug {i} in the parser\n- added option {i}\n"
                                         for i in range(args.changelog_entries)), encoding="utf-8")
            files.append(changelog)
        load = os.getloadavg()[0]
        direct = measure("direct", files)
        former = measure("former", files)
    print(f"load average {load:.1f}; each way in a fresh process")
    print(f"{'':<34}{'direct':>10}{'former':>10}{'ratio':>8}")
    print(f"{'import (s)':<34}{direct['import_s']:>10.2f}{former['import_s']:>10.2f}"
          f"{former['import_s'] / direct['import_s']:>8.1f}x")
    for path in direct["parse_s"]:
        (d, n), (f, m) = direct["parse_s"][path], former["parse_s"][path]
        name = f"{Path(path).name} ({Path(path).stat().st_size / 1e6:.1f} MB)" if Path(path).exists() else Path(path).name
        print(f"{name[:33]:<34}{d:>10.2f}{f:>10.2f}{f / d:>8.1f}x" + ("" if n == m else f"  elements {n} vs {m}!"))
    print(json.dumps({"load": load, "direct": direct, "former": former}))


if __name__ == "__main__":
    main()
