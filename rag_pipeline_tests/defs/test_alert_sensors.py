"""Alerts through Dagster's own sensors (issue 27, item 2), against a webhook receiver on
loopback: a failed sync run and a gate failure each send one alert with the source, the reason
and a link to the run; a scheduled source that has not synced within its interval plus grace
fails its `fresh` check and is announced once."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest
import yaml
from alert_receivers import webhook_receiver
from conftest import DEMO_DIR, write_config
from helpers import query


def _config(tmp_path: Path, db_url: str, docs: Path, webhook: str, *, schedule: str | None = None, **evaluation: object) -> Path:
    path = write_config(tmp_path, db_url, docs=docs, eval_set=DEMO_DIR / "eval.yaml")
    raw = yaml.safe_load(path.read_text())
    raw["alerts"] = {"webhook": webhook, "ui_url": "http://dagster.example:3000/", "freshness_grace_minutes": 0}
    if schedule:
        raw["sources"][0]["schedule"] = schedule
    raw["evaluation"].update(evaluation)
    path.write_text(yaml.safe_dump(raw))
    return path


def _run_failure_alert(instance: dg.DagsterInstance, run_id: str, config: Path) -> None:
    from rag_pipeline.defs.alerts import alert_on_failed_sync_runs
    from rag_pipeline.defs.resources import IndexDatabase, PipelineSettings

    [failure] = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.RUN_FAILURE).records
    with dg.build_run_status_sensor_context(
            sensor_name="alert_on_failed_sync_runs", dagster_event=failure.event_log_entry.dagster_event,
            dagster_instance=instance, dagster_run=instance.get_run_by_id(run_id),
            resources={"database": IndexDatabase(settings=PipelineSettings(config_path=str(config)))}) as context:
        alert_on_failed_sync_runs(context.for_run_failure())


def _run(job: str, instance: dg.DagsterInstance) -> dg.ExecuteInProcessResult:
    from rag_pipeline.definitions import load_definitions

    return load_definitions().resolve_job_def(job).execute_in_process(instance=instance, raise_on_error=False)


def test_a_failed_sync_run_sends_one_alert_with_source_reason_and_link(
        tmp_path: Path, db_url: str, demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with webhook_receiver() as (url, received):
        config = _config(tmp_path, db_url, demo_copy, url)
        monkeypatch.setenv("RAG_PIPELINE_CONFIG", str(config))
        (demo_copy / "hr" / "_access.yaml").write_text("groups: not-a-list\n")  # the plan fails
        with dg.instance_for_test() as instance:
            result = _run("sync_larkspur", instance)
            assert not result.success
            _run_failure_alert(instance, result.run_id, config)
    [alert] = [r["body"] for r in received]
    assert (alert["kind"], alert["source"], alert["run_id"]) == ("crashed", "larkspur", result.run_id)
    assert "_access.yaml" in alert["reason"]
    # the failed step and its own error, named once: not Dagster's wrapper, not the module path
    assert alert["reason"].startswith("step plan failed: ListingError: source 'larkspur': "), alert["reason"]
    assert alert["link"] == f"http://dagster.example:3000/runs/{result.run_id}"


def test_a_gate_failure_alert_carries_the_gates_verdict(
        tmp_path: Path, db_url: str, demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with webhook_receiver() as (url, received):
        config = _config(tmp_path, db_url, demo_copy, url, thresholds={"evidence_recall": 2.0})  # unreachable
        monkeypatch.setenv("RAG_PIPELINE_CONFIG", str(config))
        with dg.instance_for_test() as instance:
            result = _run("sync_larkspur", instance)
            assert not result.success
            assert query(db_url, "SELECT status FROM runs WHERE run_id = %s", result.run_id) == [("gate_failed",)]
            _run_failure_alert(instance, result.run_id, config)
    [alert] = [r["body"] for r in received]
    assert alert["kind"] == "gate_failed" and alert["subject"] == "[rag-pipeline] larkspur: evaluation gate failed"
    assert "evidence_recall" in alert["reason"] and "under 2" in alert["reason"]


def test_a_stale_scheduled_source_fails_its_fresh_check_and_is_announced_once(
        tmp_path: Path, db_url: str, demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rag_pipeline.defs.alerts import source_freshness
    from rag_pipeline.defs.resources import IndexDatabase, PipelineSettings

    with webhook_receiver() as (url, received):
        config = _config(tmp_path, db_url, demo_copy, url, schedule="0 * * * *")  # hourly, no grace
        database = IndexDatabase(settings=PipelineSettings(config_path=str(config)))
        # the index's record: the source's last successful sync finished three hours ago
        query(db_url, "INSERT INTO runs (run_id, sources, status, finished_at) VALUES"
                      " ('old', '{larkspur}', 'published', now() - interval '3 hours') RETURNING run_id")

        def tick(cursor: str | None) -> dg.SensorResult:
            with dg.instance_for_test() as instance, \
                    dg.build_sensor_context(instance=instance, cursor=cursor, resources={"database": database}) as context:
                return source_freshness(context)

        first = tick(None)
        [evaluation] = first.asset_events
        assert evaluation.asset_key == dg.AssetKey(["source", "larkspur"]) and evaluation.check_name == "fresh"
        assert not evaluation.passed and "stale" in evaluation.metadata["reason"].value
        assert [r["body"]["kind"] for r in received] == ["stale"]
        assert received[0]["body"]["link"] == "http://dagster.example:3000/assets/source/larkspur"
        second = tick(first.cursor)
        assert not second.asset_events[0].passed and len(received) == 1  # announced once, still failing
        query(db_url, "INSERT INTO runs (run_id, sources, status, finished_at) VALUES"
                      " ('new', '{larkspur}', 'nothing_to_do', now()) RETURNING run_id")
        third = tick(second.cursor)
        assert third.asset_events[0].passed and json.loads(third.cursor)["stale"] == []
        assert len(received) == 1


def test_the_ui_loads_the_alert_sensors_on_and_a_fresh_check_per_source(
        tmp_path: Path, db_url: str, demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rag_pipeline.definitions import load_definitions

    monkeypatch.setenv("RAG_PIPELINE_CONFIG", str(_config(tmp_path, db_url, demo_copy, "https://hooks.example.com/x")))
    definitions = load_definitions()
    for name in ("alert_on_failed_sync_runs", "source_freshness"):
        assert definitions.resolve_sensor_def(name).default_status == dg.DefaultSensorStatus.RUNNING
    checks = {key for c in definitions.asset_checks for key in c.check_keys}
    assert dg.AssetCheckKey(dg.AssetKey(["source", "larkspur"]), "fresh") in checks


@pytest.mark.parametrize("cursor", ["not json", "[1, 2]", '{"first_seen": {"larkspur": "yesterday"}}',
                                    '{"first_seen": {"larkspur": "2026-01-01"}}', '{"stale": 5}', "{}" * 10_000])
def test_a_freshness_cursor_it_did_not_write_counts_as_empty(
        cursor: str, tmp_path: Path, db_url: str, demo_copy: Path) -> None:
    from rag_pipeline.defs.alerts import source_freshness
    from rag_pipeline.defs.resources import IndexDatabase, PipelineSettings

    config = _config(tmp_path, db_url, demo_copy, "https://hooks.example.com/x", schedule="0 * * * *")
    database = IndexDatabase(settings=PipelineSettings(config_path=str(config)))
    with dg.instance_for_test() as instance, \
            dg.build_sensor_context(instance=instance, cursor=cursor, resources={"database": database}) as context:
        result = source_freshness(context)
    # first seen now, never synced: not stale yet, nothing announced, and a cursor of its own written
    assert result.asset_events[0].passed and json.loads(result.cursor)["stale"] == []
    assert "larkspur" in json.loads(result.cursor)["first_seen"]
