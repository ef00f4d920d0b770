"""Files named on the command line or in the config that are not what they should be: a folder
(the evaluation sets ship as folders holding eval.yaml), a FIFO or device that never ends, a file
of gigabytes, bytes that are not UTF-8. Each is one line naming the path and what to do, exit 2,
before anything is read whole or written; a sync whose gate set is such a path stops at its
plan step, before any document is parsed or encoded."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PROJECT_ROOT, write_config
from helpers import query, sync

from rag_pipeline.common.yaml_io import YamlFileError, load_yaml_file
from rag_pipeline.config import MAX_CONFIG_BYTES
from rag_pipeline.evaluation.eval_file import MAX_EVAL_SET_BYTES

ENV = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "HF_HUB_OFFLINE": "1"}
ENV.pop("DAGSTER_HOME", None)
EVAL_COMMANDS = ["eval", "calibrate-refusal", "calibrate-support", "calibrate-rerank"]


@pytest.fixture(autouse=True)
def _ephemeral_dagster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "canteen.md").write_text("# Canteen\n\nThe canteen serves lentil soup on Thursdays.\n")
    return folder


def _cli(*args: str) -> subprocess.CompletedProcess:
    """`rag-pipeline ARGS` in its own process: a reader blocked on a FIFO fails by the timeout."""
    return subprocess.run([sys.executable, "-c", "from rag_pipeline.cli.main import run; run()", *args], env=ENV,
                          capture_output=True, timeout=120, check=False, text=True)


def _one_line(done: subprocess.CompletedProcess) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("rag-pipeline: "), done.stderr
    assert done.returncode == 2, done.stderr
    return lines[0]


def _bad_file(kind: str, root: Path) -> tuple[Path, list[str]]:
    """A path of the given kind and the words its error must hold."""
    if kind == "folder":
        folder = root / "evalset"
        folder.mkdir()
        (folder / "eval.yaml").write_text("- {id: a, question: q, as_user: {groups: [g]}, expect: refused}\n")
        return folder, ["is a directory", "pass the YAML file itself", "eval.yaml"]
    if kind == "fifo":
        os.mkfifo(root / "pipe.yaml")  # read whole, it blocks until a writer comes: forever
        return root / "pipe.yaml", ["not a regular file", "save it to a file first"]
    if kind == "missing":
        return root / "nowhere.yaml", ["not found", "check the path"]
    if kind == "huge":
        with (root / "huge.yaml").open("wb") as handle:  # sparse: 64 MiB + 1 byte, nothing written
            handle.truncate(MAX_EVAL_SET_BYTES + 1)
        return root / "huge.yaml", ["larger than 67,108,864 bytes"]
    (root / "binary.yaml").write_bytes(b"\xff\xfe\x00- id: a\n")
    return root / "binary.yaml", ["not valid YAML", "utf-8"]


@pytest.mark.parametrize("kind", ["folder", "fifo", "missing", "huge", "binary"])
def test_eval_names_a_bad_evaluation_set_and_what_to_do(tmp_path: Path, db_url: str, docs: Path, kind: str) -> None:
    config = write_config(tmp_path, db_url, docs=docs)
    path, words = _bad_file(kind, tmp_path)
    line = _one_line(_cli("eval", str(path), "--config", str(config)))
    assert f"evaluation set {path}" in line and all(w in line for w in words), line


@pytest.mark.parametrize("command", EVAL_COMMANDS[1:])
@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_every_calibration_refuses_a_folder_or_a_fifo_and_stores_nothing(tmp_path: Path, db_url: str, docs: Path,
                                                                         command: str, kind: str) -> None:
    config = write_config(tmp_path, db_url, docs=docs)
    path, words = _bad_file(kind, tmp_path)
    line = _one_line(_cli(command, str(path), "--config", str(config)))
    assert all(w in line for w in words), line
    assert query(db_url, "SELECT count(*) FROM refusal_calibrations") == [(0,)]


@pytest.mark.parametrize("kind", ["folder", "fifo", "huge"])
def test_a_config_that_is_not_a_regular_file_of_sane_size_is_one_line(tmp_path: Path, kind: str) -> None:
    if kind == "folder":
        path, words = tmp_path, ["is a directory"]
    elif kind == "fifo":
        path, words = _bad_file("fifo", tmp_path)
    else:
        path, words = tmp_path / "rag_pipeline.yaml", ["larger than 33,554,432 bytes"]
        with path.open("wb") as handle:
            handle.truncate(MAX_CONFIG_BYTES + 1)
    line = _one_line(_cli("status", "--config", str(path)))
    assert f"config file {path}" in line and all(w in line for w in words), line


def test_a_sync_whose_gate_set_is_a_folder_stops_before_parsing_anything(capsys, tmp_path: Path, db_url: str,
                                                                         docs: Path) -> None:
    folder, _ = _bad_file("folder", tmp_path)
    config = write_config(tmp_path, db_url, docs=docs, eval_set=folder)
    code, out = sync(capsys, config)
    assert code != 0, out
    assert "plan" in out["error"] and f"evaluation set {folder} is a directory" in out["error"], out
    assert query(db_url, "SELECT count(*) FROM document_versions") == [(0,)]
    assert query(db_url, "SELECT count(*) FROM chunks") == [(0,)]


def test_a_sync_whose_gate_set_has_a_broken_case_stops_before_parsing_anything(capsys, tmp_path: Path,
                                                                               db_url: str, docs: Path) -> None:
    broken = tmp_path / "eval.yaml"
    broken.write_text("- {id: a, question: q}\n")  # no as_user
    config = write_config(tmp_path, db_url, docs=docs, eval_set=broken)
    code, out = sync(capsys, config)
    assert code != 0 and "as_user" in out["error"], out
    assert query(db_url, "SELECT count(*) FROM document_versions") == [(0,)]


def test_the_limit_is_checked_before_the_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text("- a\n" * 100)
    assert load_yaml_file(path, 400) == ["a"] * 100
    with pytest.raises(YamlFileError, match="larger than 399 bytes"):
        load_yaml_file(path, 399)
