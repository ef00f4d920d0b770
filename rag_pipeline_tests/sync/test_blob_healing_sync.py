"""Stored bytes heal through a sync (issue 22, item 6): a blob damaged on disk makes its file
quarantined at stage "read" (checked by hash before use, never parsed from the wrong bytes); the
next sync reads the same bytes from the source, rewrites the blob, indexes the file and the
quarantine clears. A blob damaged while at rest is rewritten when its bytes come back."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from conftest import write_config
from helpers import run_cli, search, sync, versions

CANTEEN = b"# Canteen\n\nThe canteen serves lentil soup on Thursdays.\n"


@pytest.fixture(autouse=True)
def _ephemeral_dagster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "_access.yaml").write_text("groups: [all-staff]\n")
    (folder / "parking.md").write_text("# Parking\n\nVisitor parking is behind the warehouse in row K.\n")
    return folder


@pytest.fixture
def config(tmp_path: Path, db_url: str, docs: Path) -> Path:
    return write_config(tmp_path, db_url, docs=docs, extra="limits: {ocr: false}\nmax_failed_share: 1.0\n")


def _blob(config: Path, data: bytes) -> Path:
    sha = hashlib.sha256(data).hexdigest()
    return config.parent / "state" / "blobs" / sha[:2] / sha


@pytest.mark.parametrize("damage", ["corrupt", "missing"])
def test_a_blob_damaged_before_parsing_is_quarantined_then_healed_by_the_next_sync(
        capsys, config: Path, docs: Path, db_url: str, monkeypatch, damage: str) -> None:
    from rag_pipeline.sync import parse

    (docs / "canteen.md").write_bytes(CANTEEN)
    parse_items = parse.parse_items

    def damage_then_parse(*args, **kwargs):
        blob = _blob(config, CANTEEN)  # stored by plan a moment ago; now the disk loses it
        blob.write_bytes(CANTEEN.replace(b"lentil", b"barley")) if damage == "corrupt" else blob.unlink()
        return parse_items(*args, **kwargs)

    monkeypatch.setattr(parse, "parse_items", damage_then_parse)
    code, out = sync(capsys, config)
    monkeypatch.setattr(parse, "parse_items", parse_items)
    assert code == 0, out
    [entry] = out["quarantined"]
    assert entry["uri"] == "canteen.md" and entry["stage"] == "read"
    assert ("corrupt" in entry["error"]) if damage == "corrupt" else ("No such file" in entry["error"])
    assert versions(db_url, "canteen.md") == []  # nothing was indexed from the wrong bytes
    code, status = run_cli(capsys, "status", "--config", str(config))
    assert [q["uri"] for q in status["quarantine"]] == ["canteen.md"]

    code, out = sync(capsys, config)  # the same bytes, read from the source again
    assert code == 0 and out["status"] == "published" and out["quarantined"] == [], out
    assert _blob(config, CANTEEN).read_bytes() == CANTEEN
    assert versions(db_url, "canteen.md")[-1][2:] == ("live", ["all-staff"])
    assert "lentil" in search(capsys, config, "canteen soup", "all-staff", "-k", "1")[0]["text"]
    code, status = run_cli(capsys, "status", "--config", str(config))
    assert status["quarantine"] == []


def test_a_blob_damaged_at_rest_is_rewritten_when_its_bytes_come_back(capsys, config: Path, docs: Path,
                                                                       db_url: str) -> None:
    (docs / "canteen.md").write_bytes(CANTEEN)
    assert sync(capsys, config)[0] == 0
    (docs / "canteen.md").write_bytes(CANTEEN.replace(b"Thursdays", b"Fridays"))
    assert sync(capsys, config)[0] == 0
    _blob(config, CANTEEN).write_bytes(b"\x00" * len(CANTEEN))  # version 1's blob rots on disk
    (docs / "canteen.md").write_bytes(CANTEEN)  # the edit is reverted: version 1's bytes again
    code, out = sync(capsys, config)
    assert code == 0 and out["status"] == "published" and out["quarantined"] == [], out
    assert _blob(config, CANTEEN).read_bytes() == CANTEEN
    assert versions(db_url, "canteen.md")[-1][0] == 3
    assert "Thursdays" in search(capsys, config, "canteen soup", "all-staff", "-k", "1")[0]["text"]
