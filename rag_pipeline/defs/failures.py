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
    return f"step {event.step_key} failed: {error.cls_name}: {error.message.strip()}"
