"""What the plan step refuses without reading: a file over limits.max_bytes (by its listed
size; its bytes are never read into memory nor kept in the blob store) and anything that is
not a regular file (a FIFO in a source folder used to hang the plan step forever)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from conftest import write_config
from helpers import query, sync, versions


def test_an_oversized_file_is_quarantined_from_its_listed_size_and_its_blob_never_stored(
        capsys, tmp_path: Path, db_url: str, monkeypatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [all-staff]\n")
    (docs / "small.md").write_text("# Small\n\nThe small file about the canteen menu stays searchable.\n")
    (docs / "grows.md").write_text("# Grows\n\nThe first edition of the growing file is short.\n")
    config = write_config(tmp_path, db_url, docs=docs, extra="limits: {max_bytes: 100000}\nmax_failed_share: 1.0\n")
    assert sync(capsys, config)[0] == 0
    huge = ("# Huge\n\n" + "A line of text that repeats.\n" * 20000).encode()
    (docs / "huge.md").write_bytes(huge)
    (docs / "grows.md").write_bytes(huge)
    (docs / "_access.yaml").write_text("groups: [all-staff]\nfiles:\n  grows.md: [editors]\n")
    code, out = sync(capsys, config)
    assert code == 0, out
    errors = {q["uri"]: (q["stage"], q["error"]) for q in out["quarantined"]}
    assert errors.keys() == {"huge.md", "grows.md"}
    assert all(stage == "limits" and "not read" in error for stage, error in errors.values())
    blobs = {p.name for p in (tmp_path / "state" / "blobs").rglob("*") if p.is_file()}
    assert hashlib.sha256(huge).hexdigest() not in blobs
    assert not any(hashlib.sha256(huge).hexdigest() in name for name in blobs)
    # the previous edition stays live, under the new groups: access never waits for content
    assert versions(db_url, "grows.md")[-1][2:] == ("live", ["editors"])
    assert query(db_url, "SELECT count(*) FROM run_items") == [(0,)]
    # unchanged and still too large: no work for the next run, still reported
    code, out = sync(capsys, config)
    assert code == 0 and out["status"] == "nothing_to_do", out
    assert out["counts"]["plan"]["still_quarantined"] == 2 and {q["uri"] for q in out["quarantined"]} == {"huge.md", "grows.md"}
    assert versions(db_url, "grows.md")[-1][2:] == ("live", ["editors"])


def test_a_fifo_in_the_source_folder_is_skipped_and_the_sync_completes(capsys, tmp_path: Path, db_url: str, monkeypatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [all-staff]\n")
    (docs / "menu.md").write_text("# Menu\n\nThe canteen serves lentil soup on Thursdays.\n")
    os.mkfifo(docs / "stuck.md")
    config = write_config(tmp_path, db_url, docs=docs)
    code, out = sync(capsys, config)
    assert code == 0, out
    assert [(q["uri"], q["stage"]) for q in out["quarantined"]] == [("stuck.md", "list")]
    assert "FIFO" in out["quarantined"][0]["error"]
    assert versions(db_url, "menu.md")[0][2] == "live"
