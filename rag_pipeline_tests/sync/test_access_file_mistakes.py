"""A mistake in an access file stops the sync through the CLI, naming the access file and what
is wrong, and leaves every document's published access as it was (issue 22, item 1): a typo can
never publish a restricted file under its folder's wider groups."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_config
from helpers import search, sync, versions


@pytest.fixture(autouse=True)
def _ephemeral_dagster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "hr").mkdir(parents=True)
    (folder / "_access.yaml").write_text("groups: [all-staff]\n")
    (folder / "canteen.md").write_text("# Canteen\n\nThe canteen serves lentil soup on Thursdays.\n")
    (folder / "hr" / "_access.yaml").write_text("groups: [all-staff]\nfiles:\n  salaries.md: [hr]\n")
    (folder / "hr" / "salaries.md").write_text("# Salaries\n\nThe warehouse manager band is 61,000 to 68,000 euros.\n")
    return folder


@pytest.fixture
def config(tmp_path: Path, db_url: str, docs: Path) -> Path:
    return write_config(tmp_path, db_url, docs=docs, extra="limits: {ocr: false}\n")


SALARY = "What is the warehouse manager salary band?"


def _first_sync(capsys, config: Path, db_url: str) -> None:
    code, out = sync(capsys, config)
    assert code == 0, out
    assert _groups(db_url, "hr/salaries.md") == ["hr"]


def _groups(db_url: str, uri: str) -> list[str] | None:
    """The groups of the document's newest version, None when it was never indexed."""
    found = versions(db_url, uri)
    return found[-1][3] if found else None


@pytest.mark.parametrize("key", ["Salaries.md", '"salaries.md "', "salary.md", '"*.md"'])
def test_a_files_key_that_matches_no_file_stops_the_sync_and_keeps_access_as_it_was(
        capsys, config: Path, docs: Path, db_url: str, key: str) -> None:
    _first_sync(capsys, config, db_url)
    (docs / "hr" / "_access.yaml").write_text(f"groups: [all-staff]\nfiles:\n  {key}: [hr]\n")
    (docs / "canteen.md").write_text("# Canteen\n\nThe canteen now serves barley soup on Thursdays.\n")
    code, out = sync(capsys, config)
    assert code == 1 and out["status"] == "failed"
    assert "hr/_access.yaml" in out["error"] and repr(key.strip('"')) in out["error"]
    assert "matches no file" in out["error"]
    assert _groups(db_url, "hr/salaries.md") == ["hr"]  # still only hr: nothing was published
    assert all(h["uri"] != "hr/salaries.md" for h in search(capsys, config, SALARY, "all-staff", "-k", "5"))
    assert "lentil" in search(capsys, config, "canteen soup", "all-staff", "-k", "1")[0]["text"]


def test_a_misspelt_access_file_stops_the_sync_and_is_never_indexed(capsys, config: Path, docs: Path, db_url: str) -> None:
    _first_sync(capsys, config, db_url)
    (docs / "board").mkdir()
    (docs / "board" / "_access.yml").write_text("groups: [board]\n")  # meant: only the board
    (docs / "board" / "minutes.md").write_text("# Minutes\n\nThe board approved the Marlowe acquisition.\n")
    code, out = sync(capsys, config)
    assert code == 1 and "board/_access.yml" in out["error"] and "named like an access file" in out["error"]
    assert _groups(db_url, "board/minutes.md") is None and _groups(db_url, "board/_access.yml") is None
    (docs / "board" / "_access.yml").rename(docs / "board" / "_access.yaml")  # the fix the message asks for
    code, out = sync(capsys, config)
    assert code == 0, out
    assert _groups(db_url, "board/minutes.md") == ["board"]
