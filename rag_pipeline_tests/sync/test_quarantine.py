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


def _pdf(text: str) -> bytes:
    import pymupdf

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), text, fontsize=11)
    return doc.tobytes()


def test_a_file_the_parser_refused_is_not_parsed_again_until_its_bytes_or_the_limits_change(
        capsys, tmp_path: Path, db_url: str) -> None:
    """The same bytes under the same parser and limits fail the same way: such a file is no
    work for later runs (so an unchanged corpus with broken files still syncs at no cost), yet
    every run still reports it quarantined. New bytes or new limits try it again; a read
    failure is always tried again."""
    os.environ.pop("DAGSTER_HOME", None)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [all-staff]\n")
    (docs / "ok.md").write_text("# Fine\n\nA page that parses.\n")
    (docs / "report.pdf").write_bytes(_pdf("The quarterly report names the Marlowe depot."))
    hostile = "o'brien 100%; DROP TABLE quarantine;--.pdf"
    (docs / hostile).write_bytes(b"%PDF-1.4 truncated")
    (docs / "data.xyz").write_bytes(b"an unsupported type")
    config = write_config(tmp_path, db_url, docs=docs, thresholds={"acl_leaks": 0},
                          extra="max_failed_share: 1\nlimits: {ocr: false}\n")
    code, first = sync(capsys, config)
    assert code == 0 and first["counts"]["parse"]["quarantined"] == 2, first
    refused = {q["uri"]: q["stage"] for q in first["quarantined"]}
    assert refused.keys() == {hostile, "data.xyz"}

    (docs / "report.pdf").write_bytes(b"%PDF-1.7\n" + b"\x00broken" * 200)  # a live document breaks
    code, outcome = sync(capsys, config)
    assert code == 0 and outcome["counts"]["plan"]["still_quarantined"] == 2, outcome
    assert outcome["counts"]["parse"]["quarantined"] == 1  # only the newly broken bytes were parsed

    code, outcome = sync(capsys, config)  # nothing changed: nothing parsed, everything still reported
    assert code == 0 and outcome["status"] == "nothing_to_do", outcome
    assert "parse" not in outcome["counts"] and outcome["counts"]["plan"]["still_quarantined"] == 3
    assert {q["uri"]: q["stage"] for q in outcome["quarantined"]} == {**refused, "report.pdf": "parse"}
    assert all(q["error"].count("not parsed again") == 1 for q in outcome["quarantined"])  # carried twice, said once
    first_errors = {q["uri"]: q["error"] for q in first["quarantined"]}
    assert all(q["error"].startswith(first_errors[q["uri"]]) for q in outcome["quarantined"] if q["uri"] in first_errors)
    code, status = run_cli(capsys, "status", "--config", str(config))
    assert {q["uri"] for q in status["quarantine"]} == {hostile, "data.xyz", "report.pdf"}
    code, hits = run_cli(capsys, "search", "Which depot does the quarterly report name?", "--groups", "all-staff",
                         "-k", "3", "--config", str(config))
    assert "report.pdf" in [h["uri"] for h in hits["results"]]  # its last good version stays live

    (docs / hostile).write_bytes(b"%PDF-1.4 broken in another way")  # new bytes: tried again
    code, outcome = sync(capsys, config)
    assert outcome["counts"]["parse"]["quarantined"] == 1 and outcome["counts"]["plan"]["still_quarantined"] == 2

    limits = config.read_text().replace("limits: {ocr: false}", "limits: {ocr: false, max_pages: 500}")
    config.write_text(limits)  # other limits: every refusal is tried again
    code, outcome = sync(capsys, config)
    assert outcome["counts"]["parse"]["quarantined"] == 3 and outcome["counts"]["plan"].get("still_quarantined", 0) == 0

    (docs / hostile).write_bytes(_pdf("The depot opens at six."))  # fixed
    (docs / "report.pdf").write_bytes(_pdf("The quarterly report names the Ashby depot."))
    code, outcome = sync(capsys, config)
    assert code == 0 and outcome["status"] == "published", outcome
    assert {q["uri"] for q in outcome["quarantined"]} == {"data.xyz"}
    code, status = run_cli(capsys, "status", "--config", str(config))
    assert {q["uri"] for q in status["quarantine"]} == {"data.xyz"}
