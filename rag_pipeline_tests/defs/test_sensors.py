"""A failed sync run is recorded in the index even when the run-failure sensor missed its event
(a failed tick moves that sensor's cursor on): the reconcile sensor finds index runs still
marked running whose Dagster run ended, fails them (their source is free) and tags the crash."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
from conftest import write_config
from helpers import query


def test_the_reconcile_sensor_repairs_a_missed_failure(tmp_path: Path, db_url: str, demo_copy: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from rag_pipeline.definitions import load_definitions
    from rag_pipeline.defs.resources import IndexDatabase, PipelineSettings
    from rag_pipeline.defs.sensors import reconcile_sync_runs

    config = write_config(tmp_path, db_url, docs=demo_copy)
    monkeypatch.setenv("RAG_PIPELINE_CONFIG", str(config))
    (demo_copy / "hr" / "_access.yaml").write_text("groups: not-a-list\n")  # the plan fails after registering
    database = IndexDatabase(settings=PipelineSettings(config_path=str(config)))
    with dg.instance_for_test() as instance:
        result = load_definitions().resolve_job_def("sync").execute_in_process(instance=instance, raise_on_error=False)
        assert not result.success
        assert query(db_url, "SELECT status FROM runs WHERE run_id = %s", result.run_id) == [("running",)]
        with dg.build_sensor_context(instance=instance, resources={"database": database}) as context:
            skip = reconcile_sync_runs(context)
        assert result.run_id in skip.skip_message
        assert instance.get_run_by_id(result.run_id).tags["rag/outcome"] == "crashed"
        [record] = instance.fetch_observations(dg.AssetKey(["source", "larkspur"]), limit=5).records
        assert record.event_log_entry.asset_observation.metadata["run_status"].value == "crashed"
        with dg.build_sensor_context(instance=instance, resources={"database": database}) as context:
            assert "none ended" in reconcile_sync_runs(context).skip_message  # nothing left to repair
    status, error = query(db_url, "SELECT status, error FROM runs WHERE run_id = %s", result.run_id)[0]
    assert status == "failed" and "FAILURE" in error


def _failing_plan_run(tmp_path: Path, db_url: str, demo_copy: Path, monkeypatch: pytest.MonkeyPatch,
                      instance: dg.DagsterInstance) -> tuple[str, object]:
    """A sync run the index still records as running (its plan registered it, then stopped)."""
    from rag_pipeline.definitions import load_definitions
    from rag_pipeline.defs.resources import IndexDatabase, PipelineSettings

    config = write_config(tmp_path, db_url, docs=demo_copy)
    monkeypatch.setenv("RAG_PIPELINE_CONFIG", str(config))
    (demo_copy / "hr" / "_access.yaml").write_text("groups: not-a-list\n")
    result = load_definitions().resolve_job_def("sync").execute_in_process(instance=instance, raise_on_error=False)
    assert query(db_url, "SELECT status FROM runs WHERE run_id = %s", result.run_id) == [("running",)]
    return result.run_id, IndexDatabase(settings=PipelineSettings(config_path=str(config)))


@pytest.mark.parametrize("sensor", ["record_cancelled_sync_runs", "reconcile_sync_runs"])
def test_a_cancelled_run_is_tagged_cancelled_not_crashed_and_frees_its_source(
        sensor: str, tmp_path: Path, db_url: str, demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rag_pipeline.defs import sensors

    with dg.instance_for_test() as instance:
        run_id, database = _failing_plan_run(tmp_path, db_url, demo_copy, monkeypatch, instance)
        run = instance.get_run_by_id(run_id)
        instance.report_run_canceled(run, message="terminated from the UI")  # what a cancel records
        assert instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.CANCELED
        if sensor == "record_cancelled_sync_runs":
            event = instance.all_logs(run_id, of_type=dg.DagsterEventType.RUN_CANCELED)[-1].dagster_event
            with dg.build_run_status_sensor_context(
                    sensor_name=sensor, dagster_event=event, dagster_instance=instance,
                    dagster_run=instance.get_run_by_id(run_id), resources={"database": database}) as context:
                sensors.record_cancelled_sync_runs(context)
        else:
            with dg.build_sensor_context(instance=instance, resources={"database": database}) as context:
                assert run_id in sensors.reconcile_sync_runs(context).skip_message
        assert instance.get_run_by_id(run_id).tags["rag/outcome"] == "cancelled"
        # the source's asset page is its history: the cancelled run is observed there, runless
        [record] = instance.fetch_observations(dg.AssetKey(["source", "larkspur"]), limit=5).records
        metadata = record.event_log_entry.asset_observation.metadata
        assert metadata["run_status"].value == "cancelled" and metadata["run_id"].value == run_id
        assert metadata["reason"].value.startswith("cancelled in Dagster")
    status, error = query(db_url, "SELECT status, error FROM runs WHERE run_id = %s", run_id)[0]
    assert status == "failed" and error.startswith("cancelled in Dagster")
    assert query(db_url, "SELECT count(*) FROM document_versions WHERE status = 'staged'") == [(0,)]
