"""Per source: a job, a schedule from the config's cron, and a sensor that requests a sync only
when the source's listing changed (no bytes read, small cursor)."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
import pytest

from rag_pipeline.config import load_config
from rag_pipeline.defs.per_source import source_definitions


def _config(tmp_path: Path, extra: str = "") -> Path:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "_access.yaml").write_text("groups: [all-staff]\n")
    (docs / "a.md").write_text("# A\n\ntext\n")
    path = tmp_path / "rag_pipeline.yaml"
    path.write_text(f"sources:\n  - {{name: hand-book, path: ./docs, watch: true{extra}}}\n  - {{name: other, path: ./docs}}\n")
    return path


def _tick(sensor: dg.SensorDefinition, instance: dg.DagsterInstance, cursor: str | None):
    with dg.build_sensor_context(instance=instance, cursor=cursor) as context:
        return sensor.evaluate_tick(context)


def test_the_change_sensor_requests_exactly_one_run_per_change_and_none_without(tmp_path: Path) -> None:
    config = load_config(_config(tmp_path))
    sensor = source_definitions(config.sources).resolve_sensor_def("sync_hand_book_on_change")
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING  # watch: true
    docs = tmp_path / "docs"
    with dg.instance_for_test() as instance:
        first = _tick(sensor, instance, None)
        assert first.run_requests == [] and len(first.cursor) == 64  # the baseline, a small cursor
        cursor = first.cursor
        assert _tick(sensor, instance, cursor).run_requests == []  # nothing changed: nothing asked
        os.utime(docs / "a.md")  # same name and size, new mtime: counts as a change
        (docs / "a.md").write_text("# A\n\nedited text\n")
        changed = _tick(sensor, instance, cursor)
        assert len(changed.run_requests) == 1
        [request] = changed.run_requests
        assert request.tags["rag/trigger"] == "sensor" and request.run_key.startswith("hand-book:")
        assert _tick(sensor, instance, changed.cursor).run_requests == []  # the same change once only
        for change in (lambda: (docs / "b.md").write_text("new"), lambda: (docs / "b.md").unlink(),
                       lambda: (docs / "_access.yaml").write_text("groups: [hr]\n"),
                       lambda: (docs / "sub").mkdir() or (docs / "sub" / "c.txt").write_text("deep")):
            before = _tick(sensor, instance, None).cursor
            change()
            assert len(_tick(sensor, instance, before).run_requests) == 1


def test_the_change_sensor_skips_with_the_reason_when_the_source_cannot_be_listed(tmp_path: Path) -> None:
    config = load_config(_config(tmp_path))
    sensor = source_definitions(config.sources).resolve_sensor_def("sync_hand_book_on_change")
    with dg.instance_for_test() as instance:
        cursor = _tick(sensor, instance, None).cursor
        (tmp_path / "docs").rename(tmp_path / "gone")
        result = _tick(sensor, instance, cursor)
        assert result.run_requests == [] and "cannot list 'hand-book'" in result.skip_message


def test_each_source_gets_a_job_and_its_configured_schedule(tmp_path: Path) -> None:
    config = load_config(_config(tmp_path, ", schedule: '15 3 * * mon-fri'"))
    defs = source_definitions(config.sources)
    job = defs.resolve_job_def("sync_hand_book")
    assert job.tags["rag/source"] == "hand-book"
    assert job.tags["dagster/retry_strategy"] == "ALL_STEPS"  # a retried sync starts again from plan
    schedule = defs.resolve_schedule_def("sync_hand_book_schedule")
    assert schedule.cron_schedule == "15 3 * * mon-fri" and schedule.job_name == "sync_hand_book"
    assert schedule.default_status == dg.DefaultScheduleStatus.RUNNING
    assert [s.name for s in defs.schedules] == ["sync_hand_book_schedule"]  # `other` has none
    assert defs.resolve_sensor_def("sync_other_on_change").default_status == dg.DefaultSensorStatus.STOPPED


@pytest.mark.parametrize("cron", ["* * *", "61 * * * *", "0 24 * * *", "0 0 0 * *", "*/0 * * * *", "5-1 * * * *",
                                  "0 2 * * funday", "@sometimes", "", "0 2 * * *; rm -rf /", 5])
def test_a_bad_schedule_is_a_config_error_naming_the_key(tmp_path: Path, cron: object) -> None:
    from rag_pipeline.config import ConfigError

    path = tmp_path / "rag_pipeline.yaml"
    path.write_text(f"sources:\n  - {{name: docs, path: ./docs, schedule: {cron!r}}}\n")
    with pytest.raises(ConfigError, match=r"sources\[0\].schedule"):
        load_config(path)


def test_watch_must_be_a_boolean(tmp_path: Path) -> None:
    from rag_pipeline.config import ConfigError

    path = tmp_path / "rag_pipeline.yaml"
    path.write_text("sources:\n  - {name: docs, path: ./docs, watch: 'yes please'}\n")
    with pytest.raises(ConfigError, match=r"sources\[0\]\.watch must be true or false"):
        load_config(path)


def test_each_source_is_an_asset_of_the_catalog_with_where_it_lives(tmp_path: Path) -> None:
    config = load_config(_config(tmp_path, ", schedule: '0 3 * * *'"))
    definitions = source_definitions(config.sources)
    dg.Definitions.validate_loadable(definitions)
    for name in ("hand-book", "other"):
        key = dg.AssetKey(["source", name])
        spec = definitions.resolve_assets_def(key).specs_by_key[key]
        assert spec.group_name == "sources" and "folder" in spec.kinds
        assert spec.metadata["location"] == str(tmp_path / "docs")
    handbook = dg.AssetKey(["source", "hand-book"])
    assert definitions.resolve_assets_def(handbook).specs_by_key[handbook].metadata["schedule"] == "0 3 * * *"



def _ended_run(instance: dg.DagsterInstance, key: str, how: str, tags: dict | None = None) -> None:
    """A run of the source's job recorded under `key` that ended `how` (what an operator's cancel,
    a crash or a success leaves in the instance)."""
    stand_in = dg.GraphDefinition(name="sync_hand_book", node_defs=[]).to_job()  # the sensor reads only the run's tags and status
    run = instance.create_run_for_job(stand_in, tags={"dagster/run_key": key, **(tags or {})})
    {"cancelled": instance.report_run_canceled, "failed": instance.report_run_failed}.get(how, lambda r: None)(run)
    if how == "succeeded":
        instance.handle_run_event(run.run_id, dg.DagsterEvent(  # what the run worker reports at its end
            event_type_value=dg.DagsterEventType.RUN_SUCCESS.value, job_name=run.job_name, message="done"))


def _change_sensor(tmp_path: Path) -> dg.SensorDefinition:
    return source_definitions(load_config(_config(tmp_path)).sources).resolve_sensor_def("sync_hand_book_on_change")


def _first_change(sensor: dg.SensorDefinition, instance: dg.DagsterInstance, tmp_path: Path):
    """The tick that records the listing, an edit, and the tick that requests its run."""
    cursor = _tick(sensor, instance, None).cursor
    (tmp_path / "docs" / "a.md").write_text("# A\n\nedited text\n")
    return _tick(sensor, instance, cursor)


@pytest.mark.parametrize("how", ["cancelled", "failed"])
def test_a_change_whose_run_was_cancelled_or_failed_is_requested_again_a_bounded_number_of_times(
        tmp_path: Path, how: str) -> None:
    from rag_pipeline.defs.per_source import MAX_RETRIES

    sensor = _change_sensor(tmp_path)
    with dg.instance_for_test() as instance:
        result = _first_change(sensor, instance, tmp_path)
        keys = [result.run_requests[0].run_key]
        for _ in range(MAX_RETRIES):
            _ended_run(instance, keys[-1], how)
            result = _tick(sensor, instance, result.cursor)
            [again] = result.run_requests
            keys.append(again.run_key)
        assert keys[1:] == [f"{keys[0]}:retry{n}" for n in range(1, MAX_RETRIES + 1)]  # each a new key: never deduplicated away
        _ended_run(instance, keys[-1], how)
        last = _tick(sensor, instance, result.cursor)
        assert last.run_requests == [] and f"after {MAX_RETRIES} retries" in last.skip_message
        (tmp_path / "docs" / "a.md").write_text("# A\n\nedited again\n")  # a new change starts afresh
        assert len(_tick(sensor, instance, last.cursor).run_requests) == 1


@pytest.mark.parametrize("how, tags, words", [
    ("succeeded", {}, "is SUCCESS"),
    ("failed", {"rag/outcome": "gate_failed"}, "refused by the gate"),
    ("started", {}, "listing unchanged"),
])
def test_a_change_whose_run_succeeded_was_gated_or_is_running_is_not_requested_again(
        tmp_path: Path, how: str, tags: dict, words: str) -> None:
    sensor = _change_sensor(tmp_path)
    with dg.instance_for_test() as instance:
        result = _first_change(sensor, instance, tmp_path)
        _ended_run(instance, result.run_requests[0].run_key, how, tags)
        after = _tick(sensor, instance, result.cursor)
        assert after.run_requests == [] and words in after.skip_message


@pytest.mark.parametrize("suffix", ["/", "/x", "/²", "/-1", "/" + "9" * 400])
def test_a_change_sensor_cursor_it_did_not_write_is_read_as_no_pending_run(tmp_path: Path, suffix: str) -> None:
    """A cursor edited by hand or left by another version: the tick says the listing is
    unchanged instead of failing, and the next change is requested as usual."""
    sensor = _change_sensor(tmp_path)
    with dg.instance_for_test() as instance:
        fingerprint = _tick(sensor, instance, None).cursor
        odd = _tick(sensor, instance, fingerprint + suffix)
        assert odd.run_requests == [] and "listing unchanged" in odd.skip_message
        (tmp_path / "docs" / "a.md").write_text("# A\n\nedited text\n")
        assert len(_tick(sensor, instance, fingerprint + suffix).run_requests) == 1
