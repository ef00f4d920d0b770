"""`rag-pipeline sync` records its runs in Dagster's database beside the index it syncs, run by
run: two syncs of two indexes in one process land each in its own history, and nothing of the
first (DAGSTER_PG_URL) leaks into the second."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import fresh_database, write_config
from helpers import sync

from rag_pipeline.store import database


def _dagster_run_ids(index_url: str) -> set[str]:
    import psycopg

    url = database.dagster_url(index_url).replace("postgresql+psycopg2://", "postgresql://")
    with psycopg.connect(url) as conn:
        return {r[0] for r in conn.execute("SELECT run_id FROM runs")}


def test_each_sync_is_recorded_in_the_history_beside_its_own_index(capsys, tmp_path: Path, pg_server_url: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.delenv("DAGSTER_PG_URL", raising=False)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [all-staff]\n")
    (docs / "page.md").write_text("# Page\n\nSome text.\n")
    run_ids = []
    with fresh_database(pg_server_url) as first, fresh_database(pg_server_url) as second:
        for name, url in (("a", first), ("b", second)):
            (tmp_path / name).mkdir()
            code, outcome = sync(capsys, write_config(tmp_path / name, url, docs=docs))
            assert code == 0, outcome
            run_ids.append(outcome["run_id"])
            assert "DAGSTER_PG_URL" not in os.environ
        assert _dagster_run_ids(first) == {run_ids[0]}
        assert _dagster_run_ids(second) == {run_ids[1]}
        assert (tmp_path / "a" / "state" / "dagster" / "dagster.yaml").exists()  # the CLI's own instance
