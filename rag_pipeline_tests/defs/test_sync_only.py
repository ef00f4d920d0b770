"""Controls that cannot lie (issue 27, item 3): the steps run only inside a sync job. A step
materialised alone (no source tag: it would escape the per-source queue) is refused with a
message saying what to launch instead; the evaluation gate executed without its run's plan is
refused rather than turning green over a failed sync's verdict."""

from __future__ import annotations

import os
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


def _failure(result: dg.ExecuteInProcessResult) -> dg.DagsterEvent:
    [failure] = [e for e in result.all_events if e.is_step_failure]
    return failure


def test_a_launchpad_override_of_the_config_path_is_refused_naming_both_paths(
        definitions: dg.Definitions, tmp_path: Path, db_url: str, demo_copy: Path) -> None:
    """The Launchpad accepts `resources: settings: config: config_path:` (it passes Dagster's
    validation), but only the top-level resource would take it while the database, sources and
    model resources keep the loaded configuration: the run is refused at its first step with
    what to do instead, and nothing is registered in either index."""
    other_root = tmp_path / "other"
    other_root.mkdir()
    other = write_config(other_root, db_url, docs=demo_copy)
    override = {"resources": {"settings": {"config": {"config_path": str(other)}}}}
    with dg.instance_for_test() as instance:
        result = definitions.resolve_job_def("sync").execute_in_process(run_config=override, instance=instance,
                                                                        raise_on_error=False)
    assert not result.success
    failure = _failure(result)
    assert failure.step_key == "plan" and failure.step_failure_data.error.cls_name == "Failure"
    text = failure.step_failure_data.user_failure_data.description
    assert "`resources.settings.config`" in text and str(other) in text and "Nothing was synced" in text
    assert "rag-pipeline sync --config PATH" in text and "RAG_PIPELINE_CONFIG=PATH" in text
    assert failure.step_failure_data.user_failure_data.metadata["loaded_config"].value in text
    assert {e.step_key for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_START} == {"plan"}
    assert query(db_url, "SELECT count(*) FROM runs") == [(0,)]


@pytest.mark.parametrize(("override", "refused_by"), [
    ({"resources": {"database": {"config": {"url": "postgresql://elsewhere/db"}}}}, "validation"),
    ({"resources": {"settings": {"config": {"config_path": "/etc/passwd", "extra": 1}}}}, "validation"),
    ({"resources": {"settings": {"config": {"config_path": "/etc/passwd"}}}}, "step"),
    ({"resources": {"settings": {"config": {"config_path": "x" * 100_000}}}}, "step"),
])
def test_any_other_resource_config_is_refused_before_the_configuration_is_read(
        definitions: dg.Definitions, db_url: str, override: dict, refused_by: str) -> None:
    """Hostile or malformed resource config never reaches the configuration loader: Dagster's
    own validation refuses what the schema does not allow, the first step refuses the rest, and
    the message stays short whatever the value's size."""
    job = definitions.resolve_job_def("sync")
    with dg.instance_for_test() as instance:
        if refused_by == "validation":
            with pytest.raises(dg.DagsterInvalidConfigError, match="resources"):
                job.execute_in_process(run_config=override, instance=instance, raise_on_error=False)
        else:
            result = job.execute_in_process(run_config=override, instance=instance, raise_on_error=False)
            assert not result.success
            text = _failure(result).step_failure_data.user_failure_data.description
            assert "this code location does not take" in text and len(text) < 1500
    assert query(db_url, "SELECT count(*) FROM runs") == [(0,)]


def test_the_launchpads_own_scaffold_of_the_loaded_config_path_is_no_override(
        definitions: dg.Definitions, db_url: str) -> None:
    """The Launchpad may fill in the loaded `config_path` itself: that run is not refused."""
    loaded = str(Path(os.environ["RAG_PIPELINE_CONFIG"]))
    job = definitions.resolve_job_def("sync").get_subset(asset_selection={dg.AssetKey(["plan"])})
    with dg.instance_for_test() as instance:
        result = job.execute_in_process(run_config={"resources": {"settings": {"config": {"config_path": loaded}}}},
                                        instance=instance, raise_on_error=False)
    assert result.success
    assert query(db_url, "SELECT count(*) FROM runs WHERE run_id = %s", result.run_id) == [(1,)]
