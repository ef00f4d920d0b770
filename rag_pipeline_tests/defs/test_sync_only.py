"""Controls that cannot lie (issue 27, item 3): the steps run only inside a sync job. A step
materialised alone (no source tag: it would escape the per-source queue) is refused with a
message saying what to launch instead; the evaluation gate executed without its run's plan is
refused rather than turning green over a failed sync's verdict."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
from conftest import write_config
from helpers import query

GATE = dg.AssetCheckKey(dg.AssetKey(["staged"]), "evaluation_gate")


@pytest.fixture
def definitions(tmp_path: Path, db_url: str, demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> dg.Definitions:
    monkeypatch.setenv("RAG_PIPELINE_CONFIG", str(write_config(tmp_path, db_url, docs=demo_copy)))
    from rag_pipeline.definitions import load_definitions

    return load_definitions()


def _failure_text(result: dg.ExecuteInProcessResult) -> str:
    failures = [e for e in result.all_events if e.is_step_failure]
    assert failures, "expected a failed step"
    return failures[0].step_failure_data.error.message


def test_a_step_materialised_alone_is_refused_and_registers_nothing(definitions: dg.Definitions, db_url: str) -> None:
    from rag_pipeline.defs.resources import build_resources

    plan = definitions.get_assets_def(dg.AssetKey(["plan"]))
    with dg.instance_for_test() as instance:
        result = dg.materialize([plan], instance=instance, resources=build_resources(), raise_on_error=False)
    assert not result.success
    text = _failure_text(result)
    assert "runs only inside a sync job" in text and "no rag/source tag" in text
    assert query(db_url, "SELECT count(*) FROM runs") == [(0,)]  # no run claimed a source behind the queue


def test_the_gate_executed_without_its_runs_plan_records_no_verdict(definitions: dg.Definitions, db_url: str) -> None:
    job = definitions.resolve_job_def("sync").get_subset(asset_selection=set(), asset_check_selection={GATE})
    with dg.instance_for_test() as instance:
        result = job.execute_in_process(instance=instance, raise_on_error=False)
        assert not result.success
        assert "this run did not plan" in _failure_text(result)
        evaluations = [e for e in result.all_events if e.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION]
        assert evaluations == []  # nothing that could replace a sync's verdict
    assert query(db_url, "SELECT count(*) FROM runs") == [(0,)]


def test_the_gate_executed_alone_from_its_asset_page_is_refused(definitions: dg.Definitions) -> None:
    """What the UI's "Execute" on the check launches: an ad-hoc run of the check, no source tag."""
    from rag_pipeline.defs.resources import build_resources

    gate = next(c for c in definitions.asset_checks if GATE in c.check_keys)
    staged = definitions.get_assets_def(dg.AssetKey(["staged"]))
    with dg.instance_for_test() as instance:
        result = dg.materialize([staged, gate], selection=dg.AssetSelection.checks(GATE), instance=instance,
                                resources=build_resources(), raise_on_error=False)
    assert not result.success and "the evaluation gate runs only inside a sync job" in _failure_text(result)
