"""YAML aliases let a dozen lines name billions of values (each level a list of nine aliases
of the level below): every file the project reads as YAML (config, access files, evaluation
and answer sets) refuses such a file at once, with a short message, instead of walking or
printing every value (the config's credential check took 25 s at eight levels, the evaluation
set's messages 36 s at nine, each level nine times the one before).

Each reader runs in its own process with a 120 s limit: at the twelve levels used here the
former code would take about a month."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

LEVELS = 12


def _anchors(indent: str) -> str:
    lines = [f'{indent}x0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"{indent}x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, LEVELS)]
    return "\n".join(lines) + "\n"


BOMB = f"*a{LEVELS - 1}"
CASE = "  id: c\n  question: q\n  as_user: {groups: [g]}\n"
FILES = {
    "config, credential check": ("rag_pipeline.yaml", "anchors:\n" + _anchors("  ")
                                 + f"sources:\n  - name: docs\n    path: docs\n    extra: {BOMB}\n",
                                 "from rag_pipeline.config import load_config as read", "unknown key"),
    "access file, groups": ("_access.yaml", _anchors("") + f"groups: {BOMB}\n",
                            "from rag_pipeline.sources.access_files import parse_access_file\n"
                            "def read(path): return parse_access_file(path.read_text(), str(path))", "unknown keys"),
    "eval set, case id": ("set.yaml", "- anchors:\n" + _anchors("    ") + CASE.replace("id: c", f"id: {BOMB}", 1)
                          .replace("  id", "  expect: refused\n  id", 1),
                          "from rag_pipeline.evaluation.evaluate import load_eval_set as read", "'id' must be"),
    "eval set, evidence": ("set.yaml", "- anchors:\n" + _anchors("    ") + CASE + f"  expect_evidence: {BOMB}\n",
                           "from rag_pipeline.evaluation.evaluate import load_eval_set as read", "'expect_evidence' must be"),
    "answer set, case id": ("set.yaml", "- anchors:\n" + _anchors("    ") + CASE.replace("id: c", f"id: {BOMB}", 1)
                            + "  answer: [{text: t, expect: uncited, cite: {evidence: 5}}]\n",
                            "from rag_pipeline.evaluation.answer_cases import load_answer_cases as read", "must be strings"),
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_an_alias_bomb_is_refused_at_once_with_a_short_message(tmp_path: Path, name: str) -> None:
    file_name, text, reader, words = FILES[name]
    path = tmp_path / file_name
    path.write_text(text, encoding="utf-8")
    script = (f"{reader}\nimport sys\nfrom pathlib import Path\n"
              "try:\n    read(Path(sys.argv[1]))\nexcept Exception as exc:\n"
              "    print(type(exc).__name__, exc)\nelse:\n    print('accepted')\n")
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parent.parent)
    message = done.stdout.strip()
    assert done.returncode == 0, done.stderr[-2000:]
    assert words in message and file_name in message, message
    assert "Error" in message.split()[0] and len(message) < 1_000, message[:2000]
