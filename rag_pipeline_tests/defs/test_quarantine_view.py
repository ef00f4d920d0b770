"""The "quarantined now" view on each source's page (issue 27): every sync outcome observed on
`source/<name>` lists the source's files in quarantine at that moment, with the stage and the
reason, so a broken file stays visible over later runs that did not touch it and leaves the
list once fixed."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
from conftest import DEMO_DIR, write_config

SOURCE = dg.AssetKey(["source", "larkspur"])


def _pdf(text: str) -> bytes:
    import pymupdf

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), text, fontsize=11)
    return doc.tobytes()


def _latest(instance: dg.DagsterInstance) -> dict:
    [record] = instance.fetch_observations(SOURCE, limit=1).records
    return {k: v.value for k, v in record.event_log_entry.asset_observation.metadata.items()}


def test_a_broken_file_stays_on_its_sources_page_until_it_is_fixed(
        tmp_path: Path, db_url: str, demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rag_pipeline.definitions import load_definitions

    broken = demo_copy / "it" / "scan|2026.pdf"  # a '|' in the name must not break the table
    broken.write_bytes(b"%PDF-1.4 truncated")
    monkeypatch.setenv("RAG_PIPELINE_CONFIG", str(write_config(tmp_path, db_url, docs=demo_copy,
                                                                eval_set=DEMO_DIR / "eval.yaml")))
    job = load_definitions().resolve_job_def("sync")
    instance = dg.DagsterInstance.ephemeral()

    assert job.execute_in_process(instance=instance, raise_on_error=False).success
    published = _latest(instance)
    assert published["run_status"] == "published" and published["quarantined_now"] == 1
    table = published["quarantine_now"]
    assert "scan\\|2026.pdf" in table and "| parse |" in table and "scan|2026" not in table.replace("\\|", "")
    assert table.count("\n") == 2  # header, rule, one file
    assert published["this_run_versions"] == 7 and published["this_run_quarantined"] == 1
    assert published["gate"] == "passed: all thresholds met" and published["gate_evidence_recall"] >= 0.8

    # nothing changed: the run ends at plan, and the file is still listed, with its reason
    result = job.execute_in_process(instance=instance, raise_on_error=False)
    assert result.success and result.get_asset_materialization_events() == []
    unchanged = _latest(instance)
    assert unchanged["run_status"] == "nothing_to_do" and unchanged["quarantined_now"] == 1
    assert "scan\\|2026.pdf" in unchanged["quarantine_now"] and "| parse |" in unchanged["quarantine_now"]
    assert unchanged["this_run_versions"] == 0 and unchanged["gate"].startswith("passed: nothing staged")

    broken.write_bytes(_pdf("Scanner guide. The scanner on the third floor sends documents to e-mail."))
    assert job.execute_in_process(instance=instance, raise_on_error=False).success
    fixed = _latest(instance)
    assert fixed["run_status"] == "published" and fixed["quarantined_now"] == 0
    assert fixed["quarantine_now"] == "No file of this source is in quarantine."
    assert fixed["this_run_versions"] == 1 and fixed["this_run_quarantined"] == 0


def test_each_sources_page_keeps_its_own_latest_sync_beside_the_others(
        tmp_path: Path, db_url: str, demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Per-source jobs of two sources, one after the other: the second run's figures, gate and
    quarantine land on its own source's page only; the first source's page still shows its own
    last sync (a step asset's metadata would have been replaced by the second run)."""
    import yaml

    from rag_pipeline.definitions import load_definitions

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "_access.yaml").write_text("groups: [all-staff]\n")
    (scratch / "printers.md").write_text("# Printers\n\nHold the green button for ten seconds to reset.\n")
    (scratch / "broken.pdf").write_bytes(b"%PDF-1.4 truncated")
    path = write_config(tmp_path, db_url, docs=demo_copy, eval_set=DEMO_DIR / "eval.yaml")
    config = yaml.safe_load(path.read_text())
    config["sources"].append({"name": "scratch", "kind": "filesystem", "path": str(scratch)})
    path.write_text(yaml.safe_dump(config))
    monkeypatch.setenv("RAG_PIPELINE_CONFIG", str(path))
    definitions = load_definitions()
    instance = dg.DagsterInstance.ephemeral()

    first = definitions.resolve_job_def("sync_larkspur").execute_in_process(instance=instance, raise_on_error=False)
    assert first.success
    second = definitions.resolve_job_def("sync_scratch").execute_in_process(instance=instance, raise_on_error=False)
    assert second.success

    def latest(name: str) -> tuple[str, dict]:
        [record] = instance.fetch_observations(dg.AssetKey(["source", name]), limit=1).records
        return record.run_id, {k: v.value for k, v in record.event_log_entry.asset_observation.metadata.items()}

    run, larkspur = latest("larkspur")
    assert run == first.run_id and larkspur["this_run_versions"] == 7 and larkspur["quarantined_now"] == 0
    assert larkspur["live_documents"] == 7 and larkspur["gate"].startswith("passed")
    run, mine = latest("scratch")
    assert run == second.run_id and mine["this_run_versions"] == 1 and mine["live_documents"] == 1
    assert mine["quarantined_now"] == 1 and "broken.pdf" in mine["quarantine_now"]
    assert mine["gate"].startswith("passed") and "gate_evidence_recall" in mine


def test_the_view_counts_every_file_lists_a_page_and_keeps_sources_apart(db_url: str, embedder) -> None:
    """A source with more refused files than a page shows them by name up to the cap and counts
    them all; another source's quarantine is not on its page; a completed run that no longer
    quarantines a file takes it off the list."""
    from rag_pipeline import store
    from rag_pipeline.defs.source_assets import QUARANTINE_SHOWN, source_observation
    from rag_pipeline.store import database

    many = QUARANTINE_SHOWN + 17
    with database.connect(db_url) as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
        store.runs.create_run(conn, "run-1", ["docs", "other"], model_id)
        for n in range(many):
            store.quarantine.record_quarantine(conn, "run-1", "docs", f"docs/{n:03}.pdf", "c", "parse", "bad\nbytes")
        store.quarantine.record_quarantine(conn, "run-1", "other", "other/x.md", "c", "list", "unreadable")
        conn.commit()
        total, files = store.quarantine.source_quarantine(conn, "docs", QUARANTINE_SHOWN)
        assert total == many and [f["uri"] for f in files] == [f"docs/{n:03}.pdf" for n in range(QUARANTINE_SHOWN)]
        page = source_observation(conn, "docs", "run-1", "running", {}, {}).metadata
        assert page["quarantined_now"].value == many and page["this_run_quarantined"].value == many
        assert page["gate"].value.startswith("not reached")
        assert f"... and {many - QUARANTINE_SHOWN} more" in page["quarantine_now"].value
        assert "bad bytes" in page["quarantine_now"].value and "other/x.md" not in page["quarantine_now"].value
        assert store.quarantine.source_quarantine(conn, "other", QUARANTINE_SHOWN)[0] == 1

        # a later completed run of `docs` that quarantined nothing: its list is empty, `other`'s stays
        store.runs.fail_run(conn, "run-1", status="failed", reason="crashed")
        store.runs.create_run(conn, "run-2", ["docs"], model_id)
        store.runs.fail_run(conn, "run-2", status="gate_failed", reason="evaluation gate failed: ndcg")
        assert store.quarantine.source_quarantine(conn, "docs", QUARANTINE_SHOWN) == (0, [])
        assert store.quarantine.source_quarantine(conn, "other", QUARANTINE_SHOWN)[0] == 1
