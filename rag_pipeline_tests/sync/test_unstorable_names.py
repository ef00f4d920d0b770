"""One bad name never blocks a source (issue 22, item 3): a file whose name is not valid UTF-8,
holds NUL or is absurdly long is quarantined under its escaped name, and the rest of the source
syncs, its access changes and deletions included. On a real folder with real undecodable names
(os.fsencode bytes), and on S3 (moto's server mode) for the names S3 can hold."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import write_config
from helpers import run_cli, search, sync, versions
from s3_server import Bucket

from rag_pipeline.sources.base import MAX_URI_BYTES, name_problem, quarantine_name


@pytest.fixture(autouse=True)
def _ephemeral_dagster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


def _bytes_file(folder: Path, name: bytes, text: str) -> None:
    """A file whose name is exactly these bytes (no decoding on the way to the kernel)."""
    with open(os.path.join(os.fsencode(folder), name), "wb") as handle:
        handle.write(text.encode())


def test_names_that_cannot_be_stored_are_named_escaped() -> None:
    assert name_problem("plain/é ✓.md") is None
    bad = os.fsdecode(b"caf\xe9.md")
    assert "not valid UTF-8" in name_problem(bad) and quarantine_name(bad) == "caf\\xe9.md"
    assert "NUL" in name_problem("a\x00b.md") and quarantine_name("a\x00b.md") == "a\\x00b.md"
    long = "d/" * (MAX_URI_BYTES // 2) + "x.md"
    assert "bytes long" in name_problem(long) and len(quarantine_name(long)) < 500
    assert name_problem("\ud800.md") is not None and quarantine_name("\ud800.md") == "\\ud800.md"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "_access.yaml").write_text("groups: [all-staff]\n")
    (folder / "canteen.md").write_text("# Canteen\n\nThe canteen serves lentil soup on Thursdays.\n")
    (folder / "parking.md").write_text("# Parking\n\nVisitor parking is behind the warehouse in row K.\n")
    (folder / "bikes.md").write_text("# Bikes\n\nBicycles are stored in the basement cage near lift two.\n")
    (folder / "old.md").write_text("# Old\n\nThe old fax number is retired.\n")
    return folder


def test_undecodable_and_absurd_names_are_quarantined_while_the_rest_syncs(
        capsys, tmp_path: Path, db_url: str, docs: Path) -> None:
    config = write_config(tmp_path, db_url, docs=docs, extra="limits: {ocr: false}\nmax_failed_share: 1.0\n")
    code, out = sync(capsys, config)
    assert code == 0, out
    # the bad names arrive together with an access change, a deletion and a rename
    _bytes_file(docs, b"caf\xe9-menu.md", "# Menu\n\nThe caf\xe9 menu.\n")  # Latin-1, not UTF-8
    os.mkdir(os.path.join(os.fsencode(docs), b"\xff\xfe-folder"))
    _bytes_file(docs / os.fsdecode(b"\xff\xfe-folder"), b"inside.md", "# Inside\n\nA file in a folder with a bad name.\n")
    deep = docs
    for i in range(9):  # a path of about 2,300 bytes: each name is legal, the whole is absurd
        deep = deep / (f"{i}" + "d" * 250)
    deep.mkdir(parents=True)
    (deep / "deep.md").write_text("# Deep\n\nBuried very deep.\n")
    (docs / "old.md").unlink()
    os.rename(docs / "bikes.md", os.path.join(os.fsencode(docs), b"bikes-\xe9.md"))
    (docs / "_access.yaml").write_text("groups: [all-staff]\nfiles:\n  parking.md: [facilities]\n")

    code, out = sync(capsys, config)
    assert code == 0 and out["status"] == "published", out
    quarantined = {q["uri"]: q for q in out["quarantined"]}
    assert {"caf\\xe9-menu.md", "\\xff\\xfe-folder/inside.md", "bikes-\\xe9.md"} <= set(quarantined)
    assert "not valid UTF-8" in quarantined["caf\\xe9-menu.md"]["error"]
    assert [q for q in quarantined.values() if "bytes long" in q["error"]]
    assert all(q["stage"] == "list" for q in quarantined.values())
    # the access change and the deletions were published
    assert versions(db_url, "parking.md")[-1][2:] == ("live", ["facilities"])
    assert versions(db_url, "old.md")[-1][1:3] == ("tombstone", "tombstoned")
    assert versions(db_url, "bikes.md")[-1][1:3] == ("tombstone", "tombstoned")
    assert "lentil" in search(capsys, config, "canteen soup", "all-staff", "-k", "1")[0]["text"]
    # status shows them, escaped; a second run has nothing new to do and still shows them
    code, status = run_cli(capsys, "status", "--config", str(config))
    assert code == 0 and "caf\\xe9-menu.md" in {q["uri"] for q in status["quarantine"]}
    code, out = sync(capsys, config)
    assert code == 0 and out["status"] == "nothing_to_do", out
    assert "caf\\xe9-menu.md" in {q["uri"] for q in out["quarantined"]}
    # renamed to UTF-8, it is indexed and its quarantine entry clears
    os.rename(os.path.join(os.fsencode(docs), b"caf\xe9-menu.md"), docs / "café-menu.md")
    code, out = sync(capsys, config)
    assert code == 0 and out["status"] == "published", out
    assert versions(db_url, "café-menu.md")[-1][2:] == ("live", ["all-staff"])
    code, status = run_cli(capsys, "status", "--config", str(config))
    assert "caf\\xe9-menu.md" not in {q["uri"] for q in status["quarantine"]}


def test_a_broken_access_file_in_an_undecodable_folder_is_reported_escaped(
        capsys, tmp_path: Path, db_url: str, docs: Path) -> None:
    """The error that stops the sync quotes the folder's name: it is stored and printed escaped."""
    config = write_config(tmp_path, db_url, docs=docs, extra="limits: {ocr: false}\n")
    folder = docs / os.fsdecode(b"r\xe9sum\xe9s")
    folder.mkdir()
    (folder / "_access.yaml").write_text("groups: [hr\n")
    code, out = sync(capsys, config)
    assert code == 1 and out["status"] == "failed"
    assert "r\\xe9sum\\xe9s/_access.yaml" in out["error"] and "not valid YAML" in out["error"]


S3_CONFIG = """sources:
  - {{name: s3docs, kind: s3, bucket: {bucket}, prefix: docs/, endpoint_url: "{endpoint}", default_groups: [all-staff]}}
limits: {{ocr: false}}
max_failed_share: 1.0
"""


def test_s3_a_key_holding_nul_or_too_long_is_quarantined_while_the_rest_syncs(
        capsys, tmp_path: Path, db_url: str, bucket: Bucket) -> None:
    import yaml

    bucket.put("docs/canteen.md", "# Canteen\n\nThe canteen serves lentil soup on Thursdays.\n")
    bucket.put("docs/old.md", "# Old\n\nThe old fax number is retired.\n")
    config = tmp_path / "rag_pipeline.yaml"
    config.write_text(yaml.safe_dump({"database_url": db_url, "state_dir": str(tmp_path / "state")})
                      + S3_CONFIG.format(bucket=bucket.name, endpoint=bucket.endpoint))
    code, out = sync(capsys, config)
    assert code == 0, out
    bucket.put("docs/nul\x00name.md", "# Nul\n\nA key with NUL.\n")
    bucket.put("docs/" + "k" * 1000 + "/" + "x" * 1000 + ".md", "# Long\n\nA very long key.\n")  # S3 caps at 1 kB, MinIO and moto do not
    bucket.delete("docs/old.md")
    bucket.put("docs/parking.md", "# Parking\n\nVisitor parking is behind the warehouse in row K.\n")
    code, out = sync(capsys, config)
    assert code == 0 and out["status"] == "published", out
    errors = {q["uri"]: q["error"] for q in out["quarantined"]}
    assert "NUL" in errors["nul\\x00name.md"]
    assert [e for u, e in errors.items() if u.startswith("kkkk") and "2,004 bytes long" in e]
    assert versions(db_url, "old.md")[-1][1:3] == ("tombstone", "tombstoned")
    assert versions(db_url, "parking.md")[-1][2:] == ("live", ["all-staff"])
