"""Is a source fresh? A source with a schedule is expected to have synced successfully (published,
or found nothing to do) within one schedule interval plus a grace period; after that its
freshness check fails and an alert goes out. A source without a schedule is synced by hand or by
its change sensor: nobody promised a cadence, so its freshness is reported, not judged."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class Freshness:
    passed: bool
    reason: str
    last_success: datetime | None
    deadline: datetime | None  # after this instant without a new success the source is stale


def judge(last_success: datetime | None, interval: timedelta | None, grace: timedelta, now: datetime,
          first_seen: datetime | None = None) -> Freshness:
    """`interval`: the source's schedule interval (None: no schedule). A source never synced is
    stale once an interval plus grace has passed since `first_seen` (when it was configured, or
    now: a new source gets its first interval)."""
    if interval is None:
        when = last_success.isoformat(timespec="seconds") if last_success else "never"
        return Freshness(True, f"no schedule: not judged (last successful sync: {when})", last_success, None)
    since = last_success or first_seen or now
    deadline = since + interval + grace
    window = f"every {_span(interval)} + {_span(grace)} grace"
    if now <= deadline:
        what = f"last successful sync {last_success.isoformat(timespec='seconds')}" if last_success else "not synced yet"
        return Freshness(True, f"fresh: {what} ({window}; stale after {deadline.isoformat(timespec='seconds')})",
                         last_success, deadline)
    if last_success is None:
        return Freshness(False, f"stale: never synced successfully ({window})", None, deadline)
    return Freshness(False, f"stale: last successful sync {last_success.isoformat(timespec='seconds')}, "
                            f"{_span(now - last_success)} ago ({window})", last_success, deadline)


def _span(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    return " ".join(f"{n} {unit}" for n, unit in ((days, "d"), (hours, "h"), (minutes, "min")) if n) or "0 min"
