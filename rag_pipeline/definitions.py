"""Entry point for workspace.yaml, `dg` and the CLI: everything under rag_pipeline/defs.

RAG_PIPELINE_EXECUTOR picks where the steps of the `sync` job run: unset, all in the run's own
process, as the CLI and the per-source jobs run them (the steps form a chain, so a process per
step buys no parallelism on one machine and pays the imports and the model load per step:
bench/bench_ui_path.py); `multiprocess`, each in a process of its own on this machine
(Dagster's multiprocess executor); `celery`, on Celery workers
(dagster-celery: `dagster-celery worker start` on any machine that reaches the broker, the
index database and the blob store; the broker and backend URLs go in the run config under
`execution: config:`); `k8s`, each step in a Kubernetes pod (dagster-k8s, installed apart).
The launching process and every worker must agree on it. The per-source jobs always run in
one process (see defs/jobs.py)."""

import os
import warnings
from pathlib import Path

import dagster as dg

from rag_pipeline.errors import UsageError

EXECUTOR_ENV = "RAG_PIPELINE_EXECUTOR"


def _executor() -> dg.ExecutorDefinition:
    """Imported only when asked for: dagster-celery alone takes seconds to import."""
    name = os.environ.get(EXECUTOR_ENV, "").strip().lower()
    if not name:
        return dg.in_process_executor
    if name == "multiprocess":
        return dg.multiprocess_executor
    if name == "celery":
        from dagster_celery import celery_executor

        return celery_executor
    if name == "k8s":
        try:
            from dagster_k8s import k8s_job_executor
        except ImportError as exc:
            raise UsageError(f"{EXECUTOR_ENV}=k8s needs dagster-k8s: pip install dagster-k8s==0.29.27") from exc
        return k8s_job_executor
    raise UsageError(f"{EXECUTOR_ENV}={name!r} is not an executor; use multiprocess, celery or k8s, "
                     "or unset it for the default (one process per run)")


def load_definitions(*, component_catalogue: bool = True) -> dg.Definitions:
    """Everything under defs/. The component catalogue (metadata for the UI's component browser,
    gathered from every installed package's entry points: 0.13 s) is left out where only the
    job runs (the CLI); the assets, checks, jobs, sensors and resources are the same."""
    with warnings.catch_warnings():  # as dg.load_from_defs_folder: its loaders are marked preview
        for category in (dg.PreviewWarning, dg.BetaWarning, dg.SupersessionWarning):
            warnings.simplefilter("ignore", category)
        tree = dg.ComponentTree.for_project(path_within_project=Path(__file__).parent)
        definitions = tree.build_defs() if component_catalogue else tree.build_defs_at_path(Path("."))
    return dg.Definitions.merge(definitions, dg.Definitions(executor=_executor()))


@dg.definitions
def defs() -> dg.Definitions:
    return load_definitions()
