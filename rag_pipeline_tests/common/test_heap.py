"""The collector pause around loads (rag_pipeline.heap): loads run without collector passes, the
work after them is collected as usual, and a process that runs the CLI's `main` in-process
gets its collector back as it was, with nothing left frozen."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator

import pytest
from helpers import collections_started

from rag_pipeline.common import heap


@pytest.fixture(autouse=True)
def collector_as_found() -> Iterator[tuple[int, ...]]:
    """Each test starts with the collector on and nothing frozen (a model loaded by an earlier
    test froze its objects), and leaves it as it was."""
    enabled, thresholds = gc.isenabled(), gc.get_threshold()
    gc.unfreeze()
    gc.enable()
    yield thresholds
    gc.unfreeze()
    gc.set_threshold(*thresholds)
    (gc.enable if enabled else gc.disable)()


class Cycle:
    def __init__(self) -> None:
        self.me = self


def collections_during(action: Callable[[], object]) -> int:
    """How many automatic collections start while `action` runs."""
    with collections_started() as started:
        action()
    return len(started)


def test_a_load_runs_without_passes_and_what_it_loaded_leaves_later_passes(collector_as_found) -> None:
    def load() -> list[Cycle]:
        with heap.loading():
            assert heap.paused()
            return [Cycle() for _ in range(50_000)]  # dozens of passes if the collector ran

    kept: list[list[Cycle]] = []
    assert collections_during(lambda: kept.append(load())) == 0
    assert not heap.paused() and gc.get_threshold() == collector_as_found
    assert gc.get_freeze_count() >= 50_000  # the loaded objects are frozen ...
    garbage = [Cycle() for _ in range(100)]  # ... and what comes after is still collected
    del garbage
    assert gc.collect() >= 100
    assert collections_during(lambda: [Cycle() for _ in range(50_000)]) > 0


def test_a_library_that_re_enables_the_collector_does_not_end_the_pause() -> None:
    def load() -> None:
        with heap.loading():
            gc.disable()  # what spaCy's srsly does around every msgpack load
            gc.enable()
            [Cycle() for _ in range(50_000)]

    assert collections_during(load) == 0


def test_a_failed_load_still_resumes_collection(collector_as_found) -> None:
    with pytest.raises(RuntimeError, match="broken weights"), heap.loading():
        raise RuntimeError("broken weights")
    assert gc.get_threshold() == collector_as_found and gc.isenabled()


def test_a_load_inside_a_start_up_leaves_the_pause_to_it(collector_as_found) -> None:
    with heap.startup():
        with heap.loading():
            assert heap.paused()
        assert heap.paused() and gc.get_freeze_count() == 0  # the start-up decides
        heap.work_begins()
        assert not heap.paused() and gc.get_freeze_count() > 0
        assert collections_during(lambda: [Cycle() for _ in range(50_000)]) > 0
        heap.work_begins()  # a second call changes nothing
        assert gc.get_threshold() == collector_as_found
    assert gc.get_threshold() == collector_as_found and gc.isenabled() and gc.get_freeze_count() == 0


def test_a_start_up_that_fails_restores_the_collector_as_found(collector_as_found) -> None:
    with pytest.raises(ValueError, match="bad config"), heap.startup():
        heap.work_begins()
        raise ValueError("bad config")
    assert gc.get_threshold() == collector_as_found and gc.get_freeze_count() == 0
    with pytest.raises(ValueError, match="before the work"), heap.startup():
        assert collections_during(lambda: [Cycle() for _ in range(50_000)]) == 0
        raise ValueError("before the work began")
    assert gc.get_threshold() == collector_as_found and gc.get_freeze_count() == 0
    gc.disable()  # a caller that runs with the collector off keeps it off
    with heap.startup():
        heap.work_begins()
    assert not gc.isenabled()


def test_work_begins_outside_a_start_up_does_nothing(collector_as_found) -> None:
    heap.work_begins()  # Dagster's own step processes, library callers
    assert gc.get_threshold() == collector_as_found and gc.get_freeze_count() == 0
