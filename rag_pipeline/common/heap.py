"""Loading without the cyclic garbage collector.

Importing Dagster, torch, sentence-transformers and the parsing stack allocates about a million
objects that live as long as the process and hold no garbage worth a collection. With the
collector running, its passes over that growing heap took 0.5 s of a 3 s no-op sync, 1.3 s of
a model load and 1.1 s of a parse worker's warm-up on this machine (measured with
gc.callbacks; bench/bench_startup.py prints the walls). So such loads run with the collector
paused, and what they loaded is then frozen out of its later passes (`gc.freeze`): those visit
only what the work itself allocates. Reference counting frees everything that is not a cycle
in the meantime, pause or not.

The pause sets the first generation's threshold to 0 (no automatic collection) rather than
calling gc.disable(): libraries re-enable the collector on their own (spaCy's srsly does
`gc.disable() ... gc.enable()` around every msgpack load), and would end a disable-based pause
half way. Whether the collector is enabled is never touched.

Two ways in:
- `loading()`, around one load of something the process keeps (the embedding model, the
  parse worker's libraries);
- `startup()` for a whole command line invocation (imports, configuration, database), ended by
  `work_begins()` where its work starts making garbage. When `startup()` ends, collection is as
  it was and nothing stays frozen, so a process that calls the CLI's `main` many times (the tests)
  still gets its garbage collected.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_startup: dict[str, tuple[int, ...] | None] = {"thresholds": None}  # while a start-up runs: what to restore


def paused() -> bool:
    """No automatic collection now (inside a pause)."""
    return gc.get_threshold()[0] == 0


def _pause() -> tuple[int, ...]:
    thresholds = gc.get_threshold()
    gc.set_threshold(0, *thresholds[1:])
    return thresholds


@contextmanager
def loading() -> Iterator[None]:
    """Pause collection for one load, then freeze what it loaded. Inside a pause already (the
    CLI's start-up), nothing to do: that pause ends with its own freeze."""
    if paused():
        yield
        return
    thresholds = _pause()
    try:
        yield
    finally:
        gc.freeze()
        gc.set_threshold(*thresholds)


@contextmanager
def startup() -> Iterator[None]:
    """Run a command with collection paused until `work_begins()`; restore it at the end. Inside
    another start-up (a benchmark probe around `main`), that one decides."""
    if _startup["thresholds"] is not None:
        yield
        return
    thresholds = _startup["thresholds"] = _pause()
    try:
        yield
    finally:
        _startup["thresholds"] = None
        gc.unfreeze()
        gc.set_threshold(*thresholds)


def work_begins() -> None:
    """Start-up is over: freeze what it loaded and resume collection for the work's garbage.
    Outside `startup()` (Dagster's own processes, a library caller), nothing to do."""
    thresholds = _startup["thresholds"]
    if thresholds is not None and paused():
        gc.freeze()
        gc.set_threshold(*thresholds)
