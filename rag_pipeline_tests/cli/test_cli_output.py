"""Everything from a document or a file name is data in every human-readable output: the
real CLI in a real subprocess, over an index of hostile headings (Rich markup, hyperlinks) and
hostile file names (window-title escapes, colours, BEL, newlines), never crashes and never
writes an ESC or BEL byte to the terminal."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import PROJECT_ROOT, write_config

TITLE = "\x1b]0;pwned\x07"
NAMES = {
    f"title{TITLE}.md": "# Budget [/x] overview\n\nThe budget overview lists the travel allowance per region.\n",
    "red\x1b[31mtext\x1b[0m.md": "# [link=http://evil.example]click[/link]\n\nThe canteen menu changes every Monday.\n",
    "two\nlines.md": "# [bold red]Alarm[/bold red] \\[escaped]\n\nParking permits are renewed each January.\n",
}


def _cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    env.pop("DAGSTER_HOME", None)
    return subprocess.run([sys.executable, "-c", "import sys; from rag_pipeline.cli import main; sys.exit(main())", *args],
                          env=env, capture_output=True, timeout=600)


def _clean(result: subprocess.CompletedProcess[bytes]) -> None:
    for stream in (result.stdout, result.stderr):
        assert b"\x1b" not in stream and b"\x07" not in stream, stream[-2000:]
    assert b"Traceback" not in result.stderr, result.stderr[-3000:]


@pytest.fixture(scope="module")
def hostile_index(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory):
    from conftest import fresh_database

    root = tmp_path_factory.mktemp("hostile")
    docs = root / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [all-staff]\n")
    for name, text in NAMES.items():
        (docs / name).write_text(text)
    (docs / f"unsupported{TITLE}\n.xyz").write_bytes(b"bytes")  # quarantined: its name is in the summary
    with fresh_database(pg_server_url) as url:
        config = write_config(root, url, docs=docs)
        result = _cli("sync", "--config", str(config))
        yield config, result


def test_sync_summary_shows_hostile_file_names_as_data(hostile_index) -> None:
    _, result = hostile_index
    assert result.returncode == 0, result.stderr[-3000:]
    _clean(result)
    assert b"unsupported\\x1b]0;pwned\\x07\\n.xyz" in result.stdout


@pytest.mark.parametrize("query", ["budget overview travel allowance", "canteen menu Monday", "parking permits January"])
def test_search_prints_hostile_headings_and_names_as_data(hostile_index, query: str) -> None:
    config, _ = hostile_index
    result = _cli("search", query, "--groups", "all-staff", "--config", str(config))
    assert result.returncode == 0, result.stderr[-3000:]
    _clean(result)
    assert any(marker in result.stdout for marker in (b"[/x]", b"[link=http://evil.example]", b"[bold red]"))


def test_show_history_and_status_print_hostile_text_as_data(hostile_index) -> None:
    config, _ = hostile_index
    for name in NAMES:
        for command in ("show", "history"):
            result = _cli(command, name, "--config", str(config))
            assert result.returncode == 0, (command, name, result.stderr[-3000:])
            _clean(result)
    shown = _cli("show", f"title{TITLE}.md", "--config", str(config))
    assert b"Budget [/x] overview" in shown.stdout
    status = _cli("status", "--config", str(config))
    assert status.returncode == 0
    _clean(status)


def test_errors_naming_hostile_input_reach_stderr_as_data(hostile_index) -> None:
    config, _ = hostile_index
    result = _cli("show", f"missing{TITLE}\n.md", "--config", str(config))
    assert result.returncode != 0
    _clean(result)
    result = _cli("search", "x", "--groups", "all-staff", "--as-of", f"2026{TITLE}", "--config", str(config))
    assert result.returncode == 2
    _clean(result)
