"""A step whose database connection fails is retried (a transient fault); a step that fails
for a reason of its own is not."""


import socket

import dagster as dg

from rag_pipeline.defs.retries import MAX_RETRIES, is_transient, retry_transient
from rag_pipeline.store import database


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"postgresql://nobody@127.0.0.1:{port}/none?connect_timeout=2"  # nothing listens there now


def test_a_lost_database_connection_is_retried_then_reported() -> None:
    attempts = []

    @dg.asset
    @retry_transient
    def step(context: dg.AssetExecutionContext) -> None:
        attempts.append(context.retry_number)
        database.connect(_closed_port_url())  # a real refused connection

    with dg.instance_for_test() as instance:
        result = dg.materialize([step], instance=instance, raise_on_error=False)
    assert not result.success
    assert attempts == list(range(MAX_RETRIES + 1))


def test_a_step_failing_for_its_own_reason_is_not_retried() -> None:
    attempts = []

    @dg.asset
    @retry_transient
    def step(context: dg.AssetExecutionContext) -> None:
        attempts.append(context.retry_number)
        raise ValueError("broken access file")

    with dg.instance_for_test() as instance:
        result = dg.materialize([step], instance=instance, raise_on_error=False)
    assert not result.success and attempts == [0]
    assert not is_transient(ValueError("x"))
