"""Small helpers for driving the real CLI in-process and reading the real database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest

from rag_pipeline import cli, database


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    """Run `rag-pipeline ARGS --json`; return the exit code and the parsed JSON (None if none)."""
    capsys.readouterr()
    code = cli.main([*args, "--json"])
    out = capsys.readouterr().out.strip()
    lines = [line for line in out.splitlines() if line.strip()]
    if not lines:
        return code, None
    if len(lines) == 1:
        return code, json.loads(lines[0])
    return code, [json.loads(line) for line in lines]


def sync(capsys: pytest.CaptureFixture[str], config: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    return run_cli(capsys, "sync", "--config", str(config), *extra)


def search(capsys: pytest.CaptureFixture[str], config: Path, query: str, groups: str, *extra: str) -> list[dict[str, Any]]:
    code, data = run_cli(capsys, "search", query, "--groups", groups, "--config", str(config), *extra)
    assert code == 0, data
    return data["results"]


def query(db_url: str, sql: str, *params: Any) -> list[tuple]:
    with database.connect(db_url) as conn:
        return conn.execute(sql, params).fetchall()


def versions(db_url: str, uri: str) -> list[tuple]:
    """(version_no, kind, status, acl_groups) of a document, oldest first."""
    return query(
        db_url,
        "SELECT v.version_no, v.kind, v.status, v.acl_groups FROM document_versions v"
        " JOIN documents d ON d.id = v.document_id WHERE d.uri = %s ORDER BY v.version_no",
        uri,
    )


__all__ = ["psycopg", "query", "run_cli", "search", "sync", "versions"]
