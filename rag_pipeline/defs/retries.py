"""Retry a step when the database connection failed (server restarting, network blip, a
session killed by an administrator): a transient fault, unlike a refused plan or a broken
access file, which fail at once. The steps after `plan` work from the run's work items in
PostgreSQL by stage, so running one again picks up where it stopped. A worker that dies is
Dagster's to retry (`run_retries` in dagster.yaml)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import dagster as dg
import psycopg

MAX_RETRIES = 2
SECONDS_TO_WAIT = 10

F = TypeVar("F", bound=Callable[..., Any])


def is_transient(exc: BaseException) -> bool:
    """A lost or refused connection, raised directly or wrapped (DatabaseError from connect)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, psycopg.OperationalError):
            return True
        seen = seen.__cause__
    return False


def retry_transient(step: F) -> F:
    @functools.wraps(step)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return step(*args, **kwargs)
        except Exception as exc:
            if is_transient(exc):
                raise dg.RetryRequested(max_retries=MAX_RETRIES, seconds_to_wait=SECONDS_TO_WAIT) from exc
            raise

    return wrapper  # type: ignore[return-value]
