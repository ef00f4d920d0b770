"""What a sync run came to, as the index database recorded it: the one account of a run that
the CLI prints, whichever process or machine ran its steps."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from rag_pipeline import store
from rag_pipeline.store import database

FINISHED_OK = ("published", "nothing_to_do")


@dataclass
class SyncOutcome:
    run_id: str
    status: str  # published, nothing_to_do, gate_failed, failed
    counts: dict[str, Any] = field(default_factory=dict)  # per step, as the steps recorded them
    gate_passed: bool | None = None
    gate_metrics: dict[str, float] = field(default_factory=dict)
    gate_reason: str | None = None
    quarantined: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def read_outcome(db_url: str, run_id: str, *, crashed_with: str | None = None) -> SyncOutcome:
    """The run's outcome. `crashed_with`: the orchestrator saw the run fail with this error; a
    run still marked running is then failed here (its staged versions discarded)."""
    with database.connect(db_url) as conn:
        if crashed_with is not None:
            store.runs.fail_run(conn, run_id, status="failed", reason=crashed_with)
        run = store.runs.get_run(conn, run_id) or {}
        quarantined = store.quarantine.run_quarantine(conn, run_id)
    status = run.get("status", "failed")
    return SyncOutcome(
        run_id=run_id,
        status=status,
        counts=run.get("counts") or {},
        gate_passed=run.get("gate_passed"),
        gate_metrics=run.get("gate_metrics") or {},
        gate_reason=run.get("gate_reason"),
        quarantined=quarantined,
        error=run.get("error") or (crashed_with if status not in FINISHED_OK else None),
    )
