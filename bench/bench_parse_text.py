"""Plain-text parse cost (issue 28, item 4): the direct typing of parsing/text_direct.py against
the tree before it (unstructured's partition_text), each tree in fresh processes, alternated.

    git worktree add /tmp/before f6730b8
    python bench/bench_parse_text.py --against /tmp/before [--big-mb 4]

Per tree, in milliseconds (best of two fresh processes):
- "cold": import plus the first parse of a small notes file, what a one-file sync in one
  process pays before its first element;
- parse time, warm, through `parse_document`: every licence/notice file of the installed
  packages (real text by many hands, summed), a generated register of 5,000 paragraphs with a
  heading every tenth, a generated file of --big-mb MB, an e-mail whose text body is 0.4 MB;
- "parser process": a fresh parse worker started and its first text file parsed (wall), what a
  sync of edited text files waits for, and the worker's resident memory after it.
Both trees must give the same elements (the element counts are printed and compared).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_PROBE = r"""
import json, sys, time
t0 = time.perf_counter()
from rag_pipeline.parsing import parse_document
first = parse_document(b"Quarterly Results\n\nRevenue grew by four percent in the quarter.\n", "notes.txt")
out = {"cold": (time.perf_counter() - t0) * 1000, "parse": {}}
for label, path in json.load(open(sys.argv[1])).items():
    paths = path if isinstance(path, list) else [path]
    best, count = float("inf"), 0
    for _ in range(2):
        start, count = time.perf_counter(), 0
        for p in paths:
            name = p if p.endswith((".txt", ".eml")) else "file.txt"  # a licence file's name has no suffix
            count += len(parse_document(open(p, "rb").read(), name).elements)
        best = min(best, time.perf_counter() - start)
    out["parse"][label] = (best * 1000, count)
from rag_pipeline.parsing.worker import ParseWorker
from rag_pipeline.parsing.config import ParseLimits
start = time.perf_counter()
with ParseWorker(ParseLimits()) as worker:
    worker.parse(b"Quarterly Results\n\nRevenue grew by four percent in the quarter.\n", "notes.txt")
    out["worker_ms"] = (time.perf_counter() - start) * 1000
    status = open(f"/proc/{worker._proc.pid}/status").read()
    out["worker_rss_mib"] = int(next(l for l in status.splitlines() if l.startswith("VmRSS")).split()[1]) / 1024
print(json.dumps(out))
"""


def _package_text_files() -> list[str]:
    import importlib.metadata

    names = ("LICENSE", "LICENCE", "COPYING", "NOTICE", "AUTHORS")
    found = {str(f.locate()) for d in importlib.metadata.distributions() for f in d.files or []
             if f.name.upper().startswith(names) and Path(f.name).suffix.lower() in ("", ".txt", ".md", ".rst")}
    return sorted(p for p in found if Path(p).is_file())


def _register(paragraphs: int, seed: int) -> str:
    rng = random.Random(seed)
    words = "the report shows that revenue grew in each quarter while costs fell across all regions".split()
    return "\n\n".join(f"Section {i // 10} Overview" if i % 10 == 0 else
                       " ".join(rng.choice(words) for _ in range(rng.randint(3, 40))) + rng.choice([".", "!", ":", ""])
                       for i in range(paragraphs))


def _cases(folder: Path, big_mb: float) -> dict[str, str | list[str]]:
    register = folder / "register.txt"
    register.write_text(_register(5_000, 1))
    big = folder / "big.txt"
    text = _register(5_000, 2)
    big.write_text((text + "\n\n") * max(1, round(big_mb * 1024 * 1024 / len(text))))
    mail = folder / "long.eml"
    mail.write_text("From: a@example.com\nTo: b@example.com\nSubject: Register\nContent-Type: text/plain; "
                    "charset=utf-8\n\n" + _register(3_000, 3))
    return {"installed packages' licence files": _package_text_files(), "register, 5,000 paragraphs": str(register),
            f"generated {big_mb:g} MB": str(big), "e-mail, 0.4 MB text body": str(mail)}


def _run(tree: Path, cases: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree), "UNSTRUCTURED_DISABLE_NOTICE": "1"}
    done = subprocess.run([sys.executable, "-c", _PROBE, str(cases)], capture_output=True, text=True, env=env, cwd=tree)
    if done.returncode:
        raise SystemExit(f"the probe failed in {tree}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _best(runs: list[dict]) -> dict:
    best = runs[0]
    for run in runs[1:]:
        best["cold"] = min(best["cold"], run["cold"])
        best["worker_ms"] = min(best["worker_ms"], run["worker_ms"])
        for label, (ms, count) in run["parse"].items():
            best["parse"][label] = (min(ms, best["parse"][label][0]), count)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", type=Path, required=True, help="the checkout before (git worktree add ...)")
    parser.add_argument("--big-mb", type=float, default=4.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cases = Path(folder) / "cases.json"
        cases.write_text(json.dumps(_cases(Path(folder), args.big_mb)))
        runs: dict[Path, list[dict]] = {ROOT: [], args.against: []}
        for _ in range(2):  # alternated: a load change hits both trees alike
            for tree in runs:
                runs[tree].append(_run(tree, cases))
    now, before = _best(runs[ROOT]), _best(runs[args.against])
    print(f"{'case':40} {'before ms':>11} {'now ms':>9} {'ratio':>6}  elements")
    print(f"{'cold: import + first small file':40} {before['cold']:11.0f} {now['cold']:9.0f} "
          f"{now['cold'] / before['cold']:6.2f}")
    for label, (ms, count) in now["parse"].items():
        old, old_count = before["parse"][label]
        same = "same" if count == old_count else f"DIFFER: {old_count} before"
        print(f"{label[:40]:40} {old:11.0f} {ms:9.0f} {ms / old:6.2f}  {count:,} ({same})")
    print(f"{'parser process: start + first text file':40} {before['worker_ms']:11.0f} {now['worker_ms']:9.0f} "
          f"{now['worker_ms'] / before['worker_ms']:6.2f}")
    print(f"{'parser process resident MiB after it':40} {before['worker_rss_mib']:11.0f} {now['worker_rss_mib']:9.0f}")


if __name__ == "__main__":
    main()
