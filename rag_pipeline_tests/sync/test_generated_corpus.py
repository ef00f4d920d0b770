"""bench/generated_corpus.py: the corpus the scale and peer benchmarks replay. Their figures are
only comparable if the same arguments give the same bytes, an edit touches exactly one section
(so "only the changed chunks are re-encoded" can be checked), and a deletion removes exactly the
files it names; a missing SciFact file must say what to set, not fail deep in a run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rag_pipeline_tests.conftest import PROJECT_ROOT
from rag_pipeline_tests.helpers import bench_module

SCRIPT = PROJECT_ROOT / "bench" / "generated_corpus.py"
gc = bench_module("generated_corpus")


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _sections(text: str) -> list[str]:
    return text.split("\n## ")


def test_same_seed_gives_the_same_bytes_and_another_seed_other_text(tmp_path: Path) -> None:
    gc.write_corpus(tmp_path / "a", docs=6, sections=3, seed=7)
    gc.write_corpus(tmp_path / "b", docs=6, sections=3, seed=7)
    gc.write_corpus(tmp_path / "c", docs=6, sections=3, seed=8)
    a, b, c = _files(tmp_path / "a"), _files(tmp_path / "b"), _files(tmp_path / "c")
    assert a == b
    assert a.keys() == c.keys() and a != c
    assert len(a) == 6 and all(len(_sections(t.decode())) == 4 for t in a.values())  # title + 3 sections


def test_documents_beyond_a_thousand_go_to_the_next_folder_and_stay_distinct(tmp_path: Path) -> None:
    paths = gc.write_corpus(tmp_path, docs=1002, sections=1)
    assert [p.relative_to(tmp_path).as_posix() for p in paths[-3:]] == \
        ["00/doc-00999.md", "01/doc-01000.md", "01/doc-01001.md"]
    bodies = {p.read_text(encoding="utf-8").split("\n", 1)[1] for p in paths}
    assert len(bodies) == 1002  # no two documents share their sections


def test_edit_changes_exactly_one_section_of_one_document(tmp_path: Path) -> None:
    gc.write_corpus(tmp_path, docs=4, sections=3)
    before = _files(tmp_path)
    edited = gc.edit_one_section(tmp_path, index=2)
    after = _files(tmp_path)
    name = edited.relative_to(tmp_path).as_posix()
    assert name == "00/doc-00002.md"
    assert {k: v for k, v in before.items() if k != name} == {k: v for k, v in after.items() if k != name}
    old, new = _sections(before[name].decode()), _sections(after[name].decode())
    assert len(old) == len(new) == 4
    assert [i for i, (x, y) in enumerate(zip(old, new, strict=True)) if x.strip() != y.strip()] == [3]
    assert gc.EDIT_MARKER in new[3] and gc.EDIT_MARKER not in before[name].decode()


def test_delete_removes_exactly_the_named_files(tmp_path: Path) -> None:
    paths = gc.write_corpus(tmp_path, docs=15, sections=1)
    gone = gc.delete_documents(tmp_path, count=10, start=1)
    assert gone == paths[1:11]
    assert sorted(p for p in tmp_path.rglob("*.md")) == sorted([paths[0], *paths[11:]])


def test_deleting_a_document_that_is_not_there_names_it(tmp_path: Path) -> None:
    gc.write_corpus(tmp_path, docs=3, sections=1)
    with pytest.raises(FileNotFoundError, match="doc-00003.md"):
        gc.delete_documents(tmp_path, count=3, start=1)


def test_missing_scifact_file_says_which_path_and_what_to_set(tmp_path: Path) -> None:
    env = {**os.environ, "RAG_CORPUS_DIR": str(tmp_path / "elsewhere")}
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "out"), "--docs", "2"],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode != 0
    assert str(tmp_path / "elsewhere" / "qa" / "scifact_beir" / "corpus.jsonl") in done.stderr
    assert "RAG_CORPUS_DIR" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()
