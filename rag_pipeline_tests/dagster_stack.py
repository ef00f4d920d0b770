"""The real Dagster webserver and daemon on loopback, for acceptance tests and the UI-path
benchmark: started on a DAGSTER_HOME with the project's dagster.yaml (storage in PostgreSQL),
asked what the UI shows through GraphQL, stopped with their children."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
from helpers import wait_until

PROJECT_ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
LOCATION = {"repositoryLocationName": "rag_pipeline", "repositoryName": "__repository__"}
FINISHED = {"SUCCESS", "FAILURE", "CANCELED"}

LAUNCH = """mutation($p: ExecutionParams!) { launchRun(executionParams: $p) { __typename
  ... on LaunchRunSuccess { run { runId } } ... on PythonError { message }
  ... on RunConfigValidationInvalid { errors { message } } ... on InvalidSubsetError { message } } }"""
RUNS = """query($f: RunsFilter) { runsOrError(filter: $f) { ... on Runs { results {
  runId jobName status tags { key value } } } } }"""


@dataclass
class DagsterStack:
    port: int
    env: dict[str, str]
    home: Path

    def gql(self, query: str, variables: dict[str, Any] | None = None, timeout: float = 60) -> dict[str, Any]:
        body = json.dumps({"query": query, "variables": variables or {}}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/graphql", data=body,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            data = json.loads(response.read())
        assert "errors" not in data, data["errors"]
        return data["data"]

    def daemon_errors(self) -> str:
        """The daemon's log lines that say what went wrong (sensor errors, monitoring), for failures."""
        try:
            lines = (self.home / "daemon.log").read_text(errors="replace").splitlines()
        except OSError:
            return "(no daemon log)"
        keep = [ln for ln in lines if any(w in ln for w in ("Error", "error", "Traceback", "WARNING", "failed", "Failure"))]
        return "daemon log:\n" + "\n".join(keep[-40:])[-6000:]

    def launch(self, job: str, tags: dict[str, str] | None = None) -> str:
        """What the Launchpad's "Launch run" button sends."""
        params = {"selector": {**LOCATION, "jobName": job}, "runConfigData": {},
                  "executionMetadata": {"tags": [{"key": k, "value": v} for k, v in (tags or {}).items()]}}
        result = self.gql(LAUNCH, {"p": params})["launchRun"]
        assert result["__typename"] == "LaunchRunSuccess", result
        return result["run"]["runId"]

    def runs(self, **filter_: Any) -> list[dict[str, Any]]:
        results = self.gql(RUNS, {"f": filter_ or None})["runsOrError"]["results"]
        for run in results:
            run["tags"] = {t["key"]: t["value"] for t in run["tags"]}
        return results

    def worker_pid(self, run_id: str) -> int | None:
        """The run worker's pid, from the run's own log ("Started process for run (pid: N).")."""
        import re

        query = """query($r: ID!) { logsForRun(runId: $r) { ... on EventConnection { events {
          ... on MessageEvent { message } } } } }"""
        events = self.gql(query, {"r": run_id})["logsForRun"].get("events") or []
        for event in events:
            found = re.search(r"Started process for run \(pid: (\d+)\)", event.get("message") or "")
            if found:
                return int(found.group(1))
        return None

    def run(self, run_id: str) -> dict[str, Any]:
        [run] = self.runs(runIds=[run_id])
        return run

    def wait(self, what: str, check, timeout: float = 600, every: float = 2):
        """Poll `check()` until it returns something truthy; fail naming `what` and the daemon's
        errors after `timeout` (see helpers.wait_until)."""
        return wait_until(check, timeout=timeout, interval=every, what=what, explain=self.daemon_errors)

    def wait_finished(self, run_id: str, timeout: float = 600) -> dict[str, Any]:
        return self.wait(f"run {run_id} to finish", lambda: (r := self.run(run_id))["status"] in FINISHED and r, timeout)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def instance_yaml(poll_seconds: int = 5) -> str:
    """The project's dagster.yaml, with run monitoring polling faster (tests wait on it)."""
    text = (PROJECT_ROOT / "dagster.yaml").read_text()
    return text.replace("poll_interval_seconds: 30", f"poll_interval_seconds: {poll_seconds}")


def _stop(proc: subprocess.Popen) -> None:
    """Terminate a process and every process it started (code servers, run workers, steps)."""
    try:
        children = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        children = []
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
    for child in children:
        try:
            child.kill()
        except psutil.Error:
            pass


@contextmanager
def dagster_stack(home: Path, config: Path, dagster_pg_url: str, *, daemon: bool = True) -> Iterator[DagsterStack]:
    """`dagster-webserver` and `dagster-daemon run` on `workspace.yaml`, as `make dev` runs them."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "dagster.yaml").write_text(instance_yaml())
    env = {**os.environ, "DAGSTER_HOME": str(home), "RAG_PIPELINE_CONFIG": str(config), "DAGSTER_PG_URL": dagster_pg_url,
           "PYTHONPATH": str(PROJECT_ROOT), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "UNSTRUCTURED_DISABLE_NOTICE": "1"}
    env.pop("DATABASE_URL", None)  # the config names the database
    stack = DagsterStack(port=_free_port(), env=env, home=home)
    workspace = str(PROJECT_ROOT / "workspace.yaml")
    logs = (home / "webserver.log").open("wb"), (home / "daemon.log").open("wb")
    procs = [subprocess.Popen([str(BIN / "dagster-webserver"), "-w", workspace, "-h", "127.0.0.1", "-p", str(stack.port)],
                              cwd=PROJECT_ROOT, env=env, stdout=logs[0], stderr=subprocess.STDOUT)]
    if daemon:
        procs.append(subprocess.Popen([str(BIN / "dagster-daemon"), "run", "-w", workspace],
                                      cwd=PROJECT_ROOT, env=env, stdout=logs[1], stderr=subprocess.STDOUT))
    try:
        def ready() -> bool:
            for proc, name in zip(procs, ("webserver", "daemon"), strict=False):
                assert proc.poll() is None, f"{name} exited: " + (home / f"{name}.log").read_text()[-3000:]
            try:
                nodes = stack.gql("{ assetNodes { id } }", timeout=10)["assetNodes"]
            except OSError:
                return False
            return bool(nodes)

        stack.wait("the webserver to serve the definitions", ready, timeout=240)
        yield stack
    finally:
        for proc in procs:
            _stop(proc)
        for log in logs:
            log.close()
