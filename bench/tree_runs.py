"""A benchmark's figures from this checkout and, with `--against TREE`, from another (the code
before a change), each in a fresh process of the same script with that tree's `rag_pipeline`
first on PYTHONPATH, so both are measured in the same run on the same machine.

    args = tree_arguments(__doc__)
    found = figures_per_tree(__file__, args, measure)  # None: this process printed one tree's figures
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def tree_arguments(description: str | None) -> argparse.Namespace:
    """`--against TREE`, `--repeat N` and the hidden `--json` (one tree's figures)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", type=Path, help="another checkout to measure in the same run")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args()


def figures_per_tree(script: str, args: argparse.Namespace, measure: Callable[[int], Any]) -> tuple[Any, Any] | None:
    """(this tree's figures, the other tree's or None); None when this process is one tree's run."""
    if args.json:
        print(json.dumps(measure(args.repeat)))
        return None

    def run(tree: Path) -> Any:
        env = {**os.environ, "PYTHONPATH": str(tree.resolve())}  # that tree's rag_pipeline, this script
        done = subprocess.run([sys.executable, script, "--json", "--repeat", str(args.repeat)],
                              capture_output=True, text=True, check=True, env=env)
        return json.loads(done.stdout.strip().splitlines()[-1])

    return run(ROOT), run(args.against) if args.against else None
