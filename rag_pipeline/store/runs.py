"""Runs and the per-source sync lock: one running sync per source, crashed runs reclaimed.

A run counts as alive only while a process works on it: each step holds a session-level
advisory lock on the run (`hold_run`, on a connection of the step's process, so the lock dies
with that process, whatever kills it), and a step that ends leaves a short lease
(`release_run`) for the next step's process to start. A run neither locked nor leased is
dead: the next sync of its sources fails it, discards what it staged and deletes its work
items at once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import psycopg

from rag_pipeline.common.text import storable
from rag_pipeline.errors import PipelineError
from rag_pipeline.store._sql import row, rows
from rag_pipeline.store.versions import discard_staged
from rag_pipeline.store.work_items import cleanup_run_items


class SourceBusyError(PipelineError):
    """Another run holds the sync lock of a source."""


LEASE_GRACE_SECONDS = 300  # between two steps: the next step's process may need minutes to start


def _run_lock_key(run_id: str) -> str:
    return "rag-run:" + run_id


def hold_run(conn: psycopg.Connection, run_id: str) -> None:
    """Mark the run as worked on by this connection's process until `release_run` or until the
    connection dies. Shared, so steps of one run in several processes may hold it together."""
    conn.execute("SELECT pg_advisory_lock_shared(hashtextextended(%s, 0))", (_run_lock_key(run_id),))
    conn.execute("UPDATE runs SET lease_until = NULL WHERE run_id = %s AND status = 'running'", (run_id,))


def release_run(conn: psycopg.Connection, run_id: str, grace_seconds: float = LEASE_GRACE_SECONDS) -> None:
    """A step ended: leave the lease for the next step, then drop the lock."""
    conn.execute(
        "UPDATE runs SET lease_until = now() + make_interval(secs => %s) WHERE run_id = %s AND status = 'running'",
        (grace_seconds, run_id),
    )
    conn.execute("SELECT pg_advisory_unlock_shared(hashtextextended(%s, 0))", (_run_lock_key(run_id),))


def _run_is_worked_on(conn: psycopg.Connection, run_id: str) -> bool:
    """A step holds the run's lock now, or one ended within the lease. Inside a transaction:
    the probe lock is held until it ends, so no step of that run starts meanwhile."""
    free = conn.execute("SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0))", (_run_lock_key(run_id),)).fetchone()[0]
    if not free:
        return True
    leased = conn.execute("SELECT lease_until > now() FROM runs WHERE run_id = %s", (run_id,)).fetchone()
    return bool(leased and leased[0])


def create_run(conn: psycopg.Connection, run_id: str, sources: Sequence[str], model_id: int) -> None:
    """Register a run (idempotent, so a re-executed plan step does not fail). Commits."""
    with conn.transaction():
        conn.execute(
            "INSERT INTO runs (run_id, sources, model_id) VALUES (%s, %s, %s)"
            " ON CONFLICT (run_id) DO NOTHING",
            (run_id, list(sources), model_id),
        )


@dataclass(frozen=True)
class SourceHolder:
    """The run that holds (some of) the sources a run wants, for the waiting and timeout messages."""

    run_id: str
    sources: tuple[str, ...]  # the wanted sources it holds
    started_at: datetime  # when it claimed them

    def describe(self) -> str:
        return (f"source{'s' if len(self.sources) > 1 else ''} {', '.join(self.sources)} held by run {self.run_id} "
                f"since {self.started_at.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC")


WaitReport = Callable[[SourceHolder, float], None]  # (holder, seconds waited so far)
WAIT_POLL_SECONDS = 1.0  # how often a waiting run looks again (one short transaction)
WAIT_REPORT_SECONDS = 30.0  # how often it says it is still waiting (and whenever the holder changes)


def claim_sources(
    conn: psycopg.Connection, run_id: str, sources: Sequence[str], is_alive: Callable[[str, datetime], bool],
    *, model_id: int | None = None, wait_seconds: float = 0.0, on_wait: WaitReport | None = None,
) -> None:
    """Make this run the only running sync of its sources, waiting up to `wait_seconds` for a
    run that holds one of them to finish; else SourceBusyError naming the holder. Commits.

    Runs of one source are queued by Dagster (tag limits on rag/source), but a whole-index run
    and a one-source run, or a CLI sync and a UI sync, may still start together: the later one
    waits here instead of failing. The run's row is registered by the claim itself (if absent),
    so a waiting run holds nothing and other waiters never wait for it: claims are all-or-nothing,
    hence no deadlock between runs wanting overlapping sets of sources.
    """
    started = time.monotonic()
    reported: tuple[SourceHolder | None, float] = (None, -WAIT_REPORT_SECONDS)
    while True:
        holder = _try_claim(conn, run_id, sources, model_id, is_alive)
        if holder is None:
            return
        waited = time.monotonic() - started
        if waited >= wait_seconds:
            break
        if on_wait is not None and (holder != reported[0] or waited - reported[1] >= WAIT_REPORT_SECONDS):
            on_wait(holder, waited)
            reported = (holder, waited)
        time.sleep(min(WAIT_POLL_SECONDS, wait_seconds - waited))
    waited_text = f"waited {wait_seconds:g} s (source_wait_seconds) and " if wait_seconds > 0 else ""
    message = (f"{holder.describe()} is still syncing; this run {waited_text}gave up: wait for that run to finish "
               "(or fail it in Dagster if its process is gone), then sync again")
    create_run(conn, run_id, sources, model_id)
    update_run(conn, run_id, status="failed", error=message, finished=True)
    raise SourceBusyError(message)


def _try_claim(conn: psycopg.Connection, run_id: str, sources: Sequence[str], model_id: int | None,
               is_alive: Callable[[str, datetime], bool]) -> SourceHolder | None:
    """One attempt: register this run as running and return None, or return the live holder.

    A transaction-level advisory lock per source serialises the check. A run still marked
    'running' is failed and cleaned up (staged versions discarded, work items and their parsed
    payloads deleted) when no process works on it any more (no lock, lease expired), or when
    `is_alive` (the orchestrator's view) says it has finished: a kill -9 frees a source at once.
    """
    with conn.transaction():
        for source in sorted(sources):
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", ("rag-sync:" + source,))
        rows = conn.execute(
            "SELECT run_id, started_at, sources FROM runs WHERE status = 'running' AND run_id <> %s AND sources && %s"
            " ORDER BY started_at",
            (run_id, list(sources)),
        ).fetchall()
        for other, started_at, held in rows:
            if _run_is_worked_on(conn, other) and is_alive(other, started_at):
                return SourceHolder(other, tuple(sorted(set(held) & set(sources))), started_at)
            conn.execute(
                "UPDATE runs SET status = 'failed', finished_at = now(),"
                " error = coalesce(error, 'abandoned: its process is gone') WHERE run_id = %s",
                (other,),
            )
            discard_staged(conn, other, commit=False)
            conn.execute("DELETE FROM run_items WHERE run_id = %s", (other,))
        conn.execute(
            "INSERT INTO runs (run_id, sources, model_id) VALUES (%s, %s, %s) ON CONFLICT (run_id) DO NOTHING",
            (run_id, list(sources), model_id),
        )
    return None


def update_run(conn: psycopg.Connection, run_id: str, **fields: Any) -> None:
    """Set run columns; `counts` is merged into the stored JSON. Commits. Messages are stored
    escaped (rag_pipeline.common.text): one quoting an undecodable file name must still be kept."""
    counts = fields.pop("counts", None)
    for column in ("error", "gate_reason"):
        if isinstance(fields.get(column), str):
            fields[column] = storable(fields[column])
    with conn.transaction():
        if counts:
            conn.execute(
                "UPDATE runs SET counts = counts || %s::jsonb WHERE run_id = %s",
                (json.dumps(counts), run_id),
            )
        for column in _RUN_UPDATES:
            if column in fields:
                conn.execute(
                    _RUN_UPDATES[column], (fields[column], run_id)
                )
        if "gate_metrics" in fields:
            conn.execute(
                "UPDATE runs SET gate_metrics = %s::jsonb WHERE run_id = %s",
                (json.dumps(fields["gate_metrics"]), run_id),
            )
        if fields.get("finished"):
            conn.execute("UPDATE runs SET finished_at = now() WHERE run_id = %s", (run_id,))


_RUN_UPDATES = {
    "status": "UPDATE runs SET status = %s WHERE run_id = %s",
    "gate_passed": "UPDATE runs SET gate_passed = %s WHERE run_id = %s",
    "gate_reason": "UPDATE runs SET gate_reason = %s WHERE run_id = %s",
    "error": "UPDATE runs SET error = %s WHERE run_id = %s",
    "refusal_threshold": "UPDATE runs SET refusal_threshold = %s WHERE run_id = %s",
    "refusal_coverage_weight": "UPDATE runs SET refusal_coverage_weight = %s WHERE run_id = %s",
}


def get_run(conn: psycopg.Connection, run_id: str) -> dict[str, Any] | None:
    return row(conn, "SELECT * FROM runs WHERE run_id = %s", (run_id,))


def recent_runs(conn: psycopg.Connection, limit: int = 5) -> list[dict[str, Any]]:
    return rows(conn,
            "SELECT run_id, sources, status, started_at, finished_at, gate_passed, gate_reason,"
            " gate_metrics, counts, error FROM runs ORDER BY started_at DESC LIMIT %s",
            (limit,),
        )


ABANDONED = "abandoned"


def with_abandoned(conn: psycopg.Connection, runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`runs` (as recent_runs gives them) with each run still recorded as running but that no
    process works on any more (no step holds its lock, its lease ran out: the rule the next
    claim of its sources applies) shown as `abandoned`, with why. Nothing is written: the next
    sync of its sources fails it and cleans up after it."""
    for run in runs:
        if run.get("status") != "running":
            continue
        with conn.transaction():
            alive = _run_is_worked_on(conn, run["run_id"])
        if not alive:
            run["status"] = ABANDONED
            run["error"] = run.get("error") or ("abandoned: its process is gone (killed, or its machine stopped); "
                                                "the next sync of its sources fails it and cleans up after it")
    return runs


def fail_run(conn: psycopg.Connection, run_id: str, *, status: str, reason: str) -> bool:
    """Record that a running run will not publish and make its staged versions unpublishable.
    A run that already finished keeps its verdict (returns False). Commits."""
    with conn.transaction():
        claimed = conn.execute(
            "UPDATE runs SET status = %s, error = coalesce(error, %s), finished_at = now()"
            " WHERE run_id = %s AND status = 'running'",
            (status, storable(reason), run_id),
        ).rowcount
        if claimed:
            discard_staged(conn, run_id, commit=False)
    if claimed:
        cleanup_run_items(conn, run_id)
    return bool(claimed)


def running_run_ids(conn: psycopg.Connection) -> list[str]:
    """Runs the index still records as running (for reconciliation with the orchestrator)."""
    return [r["run_id"] for r in rows(conn, "SELECT run_id FROM runs WHERE status = 'running' ORDER BY started_at", ())]


def last_successful_syncs(conn: psycopg.Connection, sources: Sequence[str]) -> dict[str, Any]:
    """Each named source's last successful sync (published or nothing to do): when it finished
    (None: never). What the freshness check judges."""
    found = dict.fromkeys(sources)
    for last in rows(conn, "SELECT s.source, max(r.finished_at) AS at FROM runs r CROSS JOIN LATERAL unnest(r.sources) AS s(source)"
                          " WHERE r.status IN ('published', 'nothing_to_do') AND s.source = ANY(%s) GROUP BY s.source",
                    (list(sources),)):
        found[last["source"]] = last["at"]
    return found
