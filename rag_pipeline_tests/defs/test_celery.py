"""The sync job on Dagster's Celery executor: a Redis broker on loopback and two Celery worker
processes run the shard steps; the index they build equals that of an in-process run of the
same corpus. This is the shape of a run spread over machines: the steps share nothing but
PostgreSQL (index and Dagster's run storage) and the blob store."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import dagster as dg
import numpy as np
import pytest
import yaml
from conftest import DEMO_DIR, PROJECT_ROOT, fresh_database, write_config
from helpers import query, wait_until

NOTICE = "Confidential: internal use only. Do not forward outside the company without approval from Legal."


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    """End one process this test started: politely, then for good."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@contextmanager
def _started(stack: ExitStack, args: list[str], log: Path, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen]:
    with log.open("wb") as out:
        proc = subprocess.Popen(args, cwd=PROJECT_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    stack.callback(_stop, proc)
    yield proc


def _redis(stack: ExitStack, folder: Path) -> str:
    server = shutil.which("redis-server")
    if server is None:
        pytest.fail("redis-server not found: run scripts/setup.sh (installs Debian's redis-server)")
    port = _free_port()
    folder.mkdir()
    with _started(stack, [server, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no",
                          "--dir", str(folder), "--protected-mode", "yes"], folder / "redis.log") as proc:
        pass
    import redis

    def answers() -> bool:
        try:
            return bool(redis.Redis(host="127.0.0.1", port=port, socket_timeout=2).ping())
        except redis.RedisError:
            assert proc.poll() is None, (folder / "redis.log").read_text()[-2000:]
            return False

    wait_until(answers, timeout=30, interval=0.2, what="redis-server to answer a ping")
    return f"redis://127.0.0.1:{port}"


def _wiki(folder: Path) -> Path:
    """A second source whose every page carries the same notice: clean must strip it from every
    shard, which it can only know from the paragraph digests of all shards' parsed documents."""
    folder.mkdir()
    topics = ["backups", "vpn access", "printer setup", "expense reports", "office keys"]
    for i, topic in enumerate(topics):
        body = (f"# {topic.title()}\n\n{NOTICE}\n\n## Steps\n\nTo handle {topic}, open the portal and follow"
                f" the checklist for {topic}. Ask the help desk, extension {100 + i}, if a step fails.\n\n"
                f"## Owner\n\nThe {topic} page is kept by team {i}.\n")
        (folder / f"{topic.replace(' ', '-')}.md").write_text(body, encoding="utf-8")
    (folder / "_access.yaml").write_text("groups: [staff]\n")
    return folder


def _config(root: Path, db_url: str, demo: Path, wiki: Path, shard_size: int) -> Path:
    path = write_config(root, db_url, docs=demo, eval_set=DEMO_DIR / "eval.yaml")
    config = yaml.safe_load(path.read_text())
    config["sources"].append({"name": "wiki-notes", "kind": "filesystem", "path": str(wiki)})
    config["shard_size"] = shard_size
    config["batch_size"] = 2
    path.write_text(yaml.safe_dump(config))
    return path


def _index(db_url: str) -> dict:
    """What a user gets from the index: live documents with their versions' hashes, ACL groups,
    chunk texts, section paths and embeddings."""
    rows = query(db_url, """
        SELECT d.source, d.uri, v.checksum, v.blob_sha256, v.acl_groups, c.ord, c.text, c.section_path,
               c.content_hash, c.embedding
        FROM documents d JOIN document_versions v ON v.document_id = d.id AND v.status = 'live'
        LEFT JOIN chunks c ON c.version_id = v.id ORDER BY d.source, d.uri, c.ord""")
    index: dict = {}
    for source, uri, checksum, blob, groups, ord_, text, section, content_hash, embedding in rows:
        doc = index.setdefault((source, uri), {"checksum": checksum, "blob": blob, "acl": sorted(groups), "chunks": []})
        doc["chunks"].append((ord_, text, list(section), content_hash, np.asarray(embedding.to_numpy(), dtype=np.float32)))
    return index


def test_the_celery_executor_runs_shards_on_workers_and_builds_the_same_index(
        tmp_path: Path, pg_server_url: str, demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wiki = _wiki(tmp_path / "wiki")
    with ExitStack() as stack:
        celery_db = stack.enter_context(fresh_database(pg_server_url))
        local_db = stack.enter_context(fresh_database(pg_server_url))
        (tmp_path / "celery").mkdir()
        (tmp_path / "local").mkdir()
        celery_config = _config(tmp_path / "celery", celery_db, demo_copy, wiki, shard_size=2)
        local_config = _config(tmp_path / "local", local_db, demo_copy, wiki, shard_size=512)

        broker = _redis(stack, tmp_path / "redis")
        from rag_pipeline.store.database import dagster_url

        home = tmp_path / "dagster_home"  # run storage every worker shares: PostgreSQL
        home.mkdir()
        (home / "dagster.yaml").write_text(yaml.safe_dump({"storage": {"postgres": {"postgres_url": dagster_url(celery_db)}},
                                                          "telemetry": {"enabled": False}}))
        celery_settings = tmp_path / "celery_settings"  # what `dagster-celery worker start -y` writes
        celery_settings.mkdir()
        (celery_settings / "dagster_celery_config.py").write_text(
            f"broker_url = {broker + '/0'!r}\nresult_backend = {broker + '/1'!r}\n")
        env = {**os.environ, "DAGSTER_HOME": str(home), "RAG_PIPELINE_CONFIG": str(celery_config),
               "RAG_PIPELINE_EXECUTOR": "celery",
               "PYTHONPATH": os.pathsep.join([str(PROJECT_ROOT), str(celery_settings), os.environ.get("PYTHONPATH", "")])}
        workers = []
        for name in ("w1", "w2"):  # one process each (solo pool): a task runs in the worker's own process
            worker = stack.enter_context(_started(stack, [
                sys.executable, "-m", "celery", "-A", "dagster_celery.app", "worker", "--pool", "solo",
                "--prefetch-multiplier=1", "-n", f"{name}@%h", "--loglevel", "INFO"], tmp_path / f"{name}.log", env))
            workers.append(worker)
        def both_ready() -> bool:
            assert all(w.poll() is None for w in workers), "a Celery worker exited: see w1.log / w2.log"
            return all(" ready." in (tmp_path / f"{n}.log").read_text(errors="replace") for n in ("w1", "w2"))

        wait_until(both_ready, timeout=300, interval=0.5, what="both Celery workers to be ready")

        run_config = tmp_path / "run_config.yaml"
        run_config.write_text(yaml.safe_dump({"execution": {"config": {"broker": broker + "/0", "backend": broker + "/1"}}}))
        dagster = Path(sys.executable).parent / "dagster"
        started = time.monotonic()
        with _started(stack, [str(dagster), "job", "execute", "-m", "rag_pipeline.definitions", "-j", "sync",
                              "-c", str(run_config)], tmp_path / "launcher.log", env) as launcher:
            launcher.wait(1500)
        celery_seconds = time.monotonic() - started
        log = (tmp_path / "launcher.log").read_text(errors="replace")
        worker_logs = "".join((tmp_path / f"{n}.log").read_text(errors="replace")[-3000:] for n in ("w1", "w2"))
        assert launcher.returncode == 0, log[-4000:] + worker_logs
        assert all(w.poll() is None for w in workers), worker_logs

        monkeypatch.setenv("DAGSTER_HOME", str(home))
        with dg.DagsterInstance.get() as instance:
            [run] = instance.get_runs()
            assert run.is_success
            entries = instance.all_logs(run.run_id)
        starts = {e.step_key: e.dagster_event.pid for e in entries
                  if e.dagster_event is not None and e.dagster_event.event_type == dg.DagsterEventType.STEP_START}
        shard_steps = {k for k in starts if ".parse_shard[" in k or ".embed_shard[" in k}
        # by source, then 2 documents a shard: 7 demo documents -> 4, 5 wiki pages -> 3
        assert {k for k in shard_steps if k.startswith("parsed.")} == {
            f"parsed.parse_shard[larkspur_{i}]" for i in range(4)} | {f"parsed.parse_shard[wiki_notes_{i}]" for i in range(4, 7)}
        worker_pids = {w.pid for w in workers}
        assert {starts[k] for k in starts} <= worker_pids  # every step ran in a worker, none in the launcher
        assert launcher.pid not in worker_pids
        assert len({starts[k] for k in shard_steps}) == 2, "both workers took shard steps"
        assert query(celery_db, "SELECT status FROM runs") == [("published",)]

        # the same corpus in process, in one shard per source, into the second database
        monkeypatch.setenv("RAG_PIPELINE_CONFIG", str(local_config))
        monkeypatch.delenv("RAG_PIPELINE_EXECUTOR", raising=False)
        from rag_pipeline.definitions import load_definitions

        started = time.monotonic()
        local = load_definitions().resolve_job_def("sync").execute_in_process(instance=dg.DagsterInstance.ephemeral(),
                                                                              raise_on_error=False)
        local_seconds = time.monotonic() - started
        assert local.success
        print(f"celery run {celery_seconds:.1f} s (2 workers, shard_size 2), in-process run {local_seconds:.1f} s")

        remote, here = _index(celery_db), _index(local_db)
        assert len(here) == 12 and set(remote) == set(here)
        for key, doc in here.items():
            other = remote[key]
            assert (other["checksum"], other["blob"], other["acl"]) == (doc["checksum"], doc["blob"], doc["acl"]), key
            assert [c[:4] for c in other["chunks"]] == [c[:4] for c in doc["chunks"]], key
            for mine, theirs in zip(doc["chunks"], other["chunks"]):
                assert np.allclose(mine[4], theirs[4], atol=1e-5), key
        wiki_texts = [c[1] for (source, _), doc in here.items() if source == "wiki-notes" for c in doc["chunks"]]
        assert wiki_texts and not any(NOTICE in t for t in wiki_texts)  # the notice went from every shard
