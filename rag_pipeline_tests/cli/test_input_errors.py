"""Clear errors for every input (issue 22, item 7): bytes that are not UTF-8 in a query, `--user`
or `--groups`, an absurd `-k`, a database that stops mid-sync and a run whose process died each
give one line naming the problem, exit 2 for the input and 1 for the environment; a batch skips
only its bad lines; `status` shows a dead run as abandoned."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import PROJECT_ROOT, write_config
from helpers import query, run_cli, sync

from rag_pipeline.store import database

ENV = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "HF_HUB_OFFLINE": "1"}
ENV.pop("DAGSTER_HOME", None)


@pytest.fixture(autouse=True)
def _ephemeral_dagster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


def _cli(*args: str | bytes) -> subprocess.CompletedProcess:
    """`rag-pipeline ARGS` in its own process, the arguments passed as the exact bytes given."""
    return subprocess.run([sys.executable, "-c", "from rag_pipeline.cli.main import run; run()", *args], env=ENV,
                          capture_output=True, timeout=600, check=False)


def _one_line(stderr: bytes) -> str:
    text = stderr.decode("utf-8")  # the message itself is valid UTF-8 whatever the input held
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert lines[0].startswith("rag-pipeline: ")
    return lines[0]


@pytest.mark.parametrize("args, words", [
    ([b"caf\xe9 opening hours", "--groups", "all-staff"], ["query is not valid UTF-8", "caf\\xe9 opening hours"]),
    (["canteen", "--groups", b"all-staff,\xe9quipe"], ["--groups", "lone surrogate", "\\xe9quipe"]),
    (["canteen", "--groups", "all-staff", "--user", b"j\xf6rg"], ["--user", "j\\xf6rg", "not valid UTF-8"]),
    (["canteen", "--groups", "hr\u200b"], ["--groups", "invisible format character"]),
    (["canteen", "--groups", "x" * 300], ["--groups", "the limit is 200"]),
    (["canteen", "--groups", "all-staff", "-k", "1000000000000"], ["-k 1000000000000", "from 1 to 1,000"]),
    (["canteen", "--groups", "all-staff", "-k", "-5"], ["-k must be positive"]),
])
def test_bad_search_input_is_one_line_and_exit_2_before_anything_loads(tmp_path: Path, args: list, words: list[str]) -> None:
    missing = tmp_path / "no-such-config.yaml"  # refused before the configuration is even read
    done = _cli("search", *args, "--config", str(missing))
    line = _one_line(done.stderr)
    assert done.returncode == 2, line
    assert all(w in line for w in words), line
    assert done.stdout == b""


@pytest.fixture
def config(tmp_path: Path, db_url: str) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [all-staff]\n")
    (docs / "canteen.md").write_text("# Canteen\n\nThe canteen serves lentil soup on Thursdays.\n")
    return write_config(tmp_path, db_url, docs=docs, extra="limits: {ocr: false}\n")


def test_a_batch_skips_only_its_bad_lines(capsys, tmp_path: Path, config: Path) -> None:
    code, out = sync(capsys, config)
    assert code == 0, out
    batch = tmp_path / "queries.jsonl"
    lines = [
        json.dumps({"id": "ok-1", "query": "What does the canteen serve?"}).encode(),
        b'{"id": "latin1", "query": "caf\xe9"}',  # not UTF-8 at all
        json.dumps({"id": "surrogate", "query": "caf\ud800"}).encode(),  # valid JSON, not valid text
        json.dumps({"id": "bad-group", "query": "canteen", "groups": ["all-staff", "a\u0007b"]}).encode(),
        json.dumps({"id": "bad-user", "query": "canteen", "user": "\udcff"}).encode(),
        json.dumps({"id": "\udcff", "query": "canteen"}).encode(),  # its id cannot be printed as UTF-8 either
        json.dumps({"id": "ok-2", "query": "soup on Thursdays"}).encode(),
    ]
    batch.write_bytes(b"\n".join(lines) + b"\n")
    code, answers = run_cli(capsys, "search", "--queries", str(batch), "--groups", "all-staff", "--config", str(config))
    assert code == 1  # some lines failed
    assert len(answers) == len(lines)
    by_line = dict(enumerate(answers, 1))
    assert by_line[1]["id"] == "ok-1" and "lentil" in by_line[1]["results"][0]["text"]
    assert by_line[7]["id"] == "ok-2" and by_line[7]["results"]
    assert by_line[6]["id"] == "\udcff" and by_line[6]["results"]  # answered; its id is written escaped
    assert "utf-8" in by_line[2]["error"].lower() and by_line[2]["line"] == 2
    assert "not valid UTF-8" in by_line[3]["error"]
    assert "control character" in by_line[4]["error"]
    assert "--user" in by_line[5]["error"]


@pytest.fixture
def own_server() -> Iterator[Path]:
    """A state folder whose embedded server this test may stop."""
    import shutil

    root = Path(tempfile.mkdtemp(prefix="rag-pipeline-test-stop-"))
    root.chmod(0o755)
    try:
        yield root
    finally:
        database.stop_server(root / "state" / "pgdata")
        shutil.rmtree(root, ignore_errors=True)


def test_a_database_stopped_mid_sync_is_one_line_and_exit_1(capsys, own_server: Path, monkeypatch) -> None:
    from rag_pipeline import cli
    from rag_pipeline.sync import parse

    docs = own_server / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [all-staff]\n")
    (docs / "a.md").write_text("# A\n\nAlpha.\n")
    config = own_server / "rag_pipeline.yaml"
    config.write_text(f"state_dir: {own_server / 'state'}\nsources:\n  - {{name: docs, path: {docs}}}\n"
                      "limits: {ocr: false}\n")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    parse_items = parse.parse_items

    def stop_then_parse(*args, **kwargs):
        database.stop_server(own_server / "state" / "pgdata")  # the server goes away after plan
        return parse_items(*args, **kwargs)

    monkeypatch.setattr(parse, "parse_items", stop_then_parse)
    capsys.readouterr()
    code = cli.main(["sync", "--config", str(config)])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("rag-pipeline: ")]
    assert code == 1, err
    assert len(lines) == 1 and "the database stopped answering" in lines[0], err
    assert "Traceback" not in err


def test_status_shows_a_run_whose_process_died_as_abandoned(capsys, config: Path, db_url: str) -> None:
    code, out = sync(capsys, config)
    assert code == 0, out
    # what a sync killed with -9 leaves: a run recorded as running, its lock gone with its
    # session, its lease run out
    query(db_url, "INSERT INTO runs (run_id, sources, lease_until) VALUES ('dead-run', '{larkspur}', now() - interval '1 hour')"
                  " RETURNING run_id")
    code, status = run_cli(capsys, "status", "--config", str(config))
    runs = {r["run_id"]: r for r in status["last_runs"]}
    assert code == 0 and runs["dead-run"]["status"] == "abandoned" and "process is gone" in runs["dead-run"]["error"]
    assert runs[out["run_id"]]["status"] == "published"
    capsys.readouterr()
    from rag_pipeline import cli

    assert cli.main(["status", "--config", str(config)]) == 0
    shown = capsys.readouterr().out
    assert "dead-run abandoned" in shown and "next sync" in shown
    # status wrote nothing; the next sync of its source fails it for good and goes on
    assert query(db_url, "SELECT status FROM runs WHERE run_id = 'dead-run'") == [("running",)]
    assert sync(capsys, config)[0] == 0
    assert query(db_url, "SELECT status FROM runs WHERE run_id = 'dead-run'") == [("failed",)]
