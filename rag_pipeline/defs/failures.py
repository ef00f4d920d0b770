"""How a failed step is described to people (the CLI's error line, alerts): the user code's own
exception, not Dagster's wrapper around it."""

from __future__ import annotations

import dagster as dg


def step_failure_text(event: dg.DagsterEvent) -> str | None:
    """`step <key> failed: <Exception>: <message>` for a STEP_FAILURE event, else None."""
    if not (event.is_step_failure and event.step_failure_data and event.step_failure_data.error):
        return None
    error = event.step_failure_data.error
    error = error.cause or error
    message = error.message.strip()
    qualified, colon, rest = message.partition(": ")
    if colon and qualified.rsplit(".", 1)[-1] == error.cls_name:  # "pkg.mod.Error: text" already names it
        message = rest
    return f"step {event.step_key} failed: {error.cls_name}: {message}"


def first_step_failure(instance: dg.DagsterInstance, run_id: str) -> str | None:
    """The run's first failed step and its own error, from the instance's event log (a run's
    failure message only lists the steps)."""
    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.STEP_FAILURE, limit=1).records
    event = records[0].event_log_entry.dagster_event if records else None
    return step_failure_text(event) if event else None
