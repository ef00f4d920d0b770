"""What `status` lists as quarantined is what is broken now: a file removed (or fixed) since it
was quarantined is no longer listed or counted; a file still broken stays listed."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import write_config
from helpers import run_cli, sync


def test_status_forgets_quarantined_files_that_were_removed_or_fixed(capsys, tmp_path: Path, db_url: str) -> None:
    os.environ.pop("DAGSTER_HOME", None)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [all-staff]\n")
    (docs / "ok.md").write_text("# Fine\n\nA page that parses.\n")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 truncated")
    (docs / "fixed.pdf").write_bytes(b"%PDF-1.4 truncated too")
    config = write_config(tmp_path, db_url, docs=docs, thresholds={"acl_leaks": 0}, extra="max_failed_share: 1\n")
    code, outcome = sync(capsys, config)
    assert code == 0, outcome
    code, status = run_cli(capsys, "status", "--config", str(config))
    assert code == 0 and {q["uri"] for q in status["quarantine"]} == {"broken.pdf", "fixed.pdf"}
    assert status["quarantined_files"] == 2

    (docs / "broken.pdf").unlink()
    (docs / "fixed.pdf").unlink()
    (docs / "fixed.md").write_text("# Fixed\n\nNow readable.\n")
    (docs / "still.pdf").write_bytes(b"%PDF-1.4 still broken")
    code, outcome = sync(capsys, config)
    assert code == 0, outcome
    code, status = run_cli(capsys, "status", "--config", str(config))
    assert {q["uri"] for q in status["quarantine"]} == {"still.pdf"}
    assert status["quarantined_files"] == 1
    capsys.readouterr()
    from rag_pipeline import cli

    assert cli.main(["status", "--config", str(config)]) == 0
    text = capsys.readouterr().out
    assert "still.pdf" in text and "broken.pdf" not in text
