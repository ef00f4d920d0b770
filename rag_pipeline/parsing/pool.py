"""Parse workers sized to the machine: one parser process per core keeps every core busy while
a run parses (the clean step needs every document of a source parsed, so parsing is a phase of
its own that the embedding model cannot fill), and the run's own process reads blobs and
stores results while the workers parse.

Each worker keeps the guarantees of `parse_worker`: its own process, its CPU-time limit per
file, one replacement after a timeout or crash. A worker's start-up (seconds of imports) is
only paid when the work left would take longer than that at the current rate, so a sync of one
edited file starts one parser, as before, and a large sync grows to the pool's size.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from rag_pipeline.common.cpus import usable_cores, usable_cpus
from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.types import ParseError
from rag_pipeline.parsing.worker import ParseWorker, ParseWorkerError

WORKER_MEMORY_BUDGET = 1024**3  # a parser's warm process (~0.35 GiB) plus room for a large file
MAX_AUTO_WORKERS = 16
STARTUP_GUESS_SECONDS = 5.0  # a worker's start-up before one has been measured on this machine
POLL_SECONDS = 0.25  # how often the pool reconsiders its size while no result arrives
MIN_IDLE_CORES = 0.5  # a new parser needs at least this much of the machine's CPU unused
CPU_WINDOW_SECONDS = 0.2  # shortest interval idle CPU is measured over


def machine_workers() -> int:
    """Parser processes this machine can run side by side: one per usable core, no more than
    available memory holds at WORKER_MEMORY_BUDGET each, at least one."""
    cores = usable_cores()
    available = _available_memory()
    by_memory = available // WORKER_MEMORY_BUDGET if available else cores
    return max(1, min(cores, by_memory, MAX_AUTO_WORKERS))


def _available_memory() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


class IdleCpu:
    """Unused cores among those this process may run on, over the interval since the last
    reading (/proc/stat). Other step processes of the same run (the multiprocess executor runs
    shards side by side), other runs and other programs all show up here, so pools on one
    machine do not each grow to the machine's size. `stat` and `window` are there for tests,
    which feed it snapshots of /proc/stat instead of the machine's own load."""

    def __init__(self, stat: str = "/proc/stat", window: float = CPU_WINDOW_SECONDS) -> None:
        self._stat, self._window = stat, window
        self._cpus = {f"cpu{n}" for n in usable_cpus()}
        self._last = self._read()
        self._at = time.monotonic()
        self._idle: float | None = None

    def _read(self) -> tuple[int, int] | None:
        """(idle, total) jiffies over the usable cores; None where /proc/stat is not there."""
        try:
            with open(self._stat, encoding="ascii") as handle:
                lines = [line.split() for line in handle if line.startswith("cpu")]
        except OSError:
            return None
        idle = total = 0
        for fields in lines:
            if fields[0] in self._cpus:
                ticks = [int(v) for v in fields[1:]]
                idle += ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
                total += sum(ticks[:8])  # guest time is already counted in user time
        return (idle, total) if total else None

    def cores(self) -> float | None:
        """Idle cores (0 .. usable cores), None where it cannot be measured."""
        if time.monotonic() - self._at >= self._window:
            now = self._read()
            if now is not None and self._last is not None and now[1] > self._last[1]:
                self._idle = (now[0] - self._last[0]) / (now[1] - self._last[1]) * len(self._cpus)
            self._last, self._at = now, time.monotonic()
        return self._idle


def room_for_another(idle_cores: float | None, available_memory: int | None) -> bool:
    """A new parser needs a core nobody uses and the memory of one more parser; where either
    cannot be measured, it is not held against it."""
    return (idle_cores is None or idle_cores >= MIN_IDLE_CORES) and \
        (available_memory is None or available_memory >= WORKER_MEMORY_BUDGET)


def worth_another(*, elapsed: float, completed: int, remaining: int, startup: float) -> bool:
    """Whether one more worker pays for its start-up: the work not yet handed out, at the rate
    seen so far (a file still being parsed counts as done at this moment, which errs towards
    growing while a large first file runs), outlasts a worker's start-up."""
    if remaining <= 0:
        return False
    return elapsed / max(completed, 1) * remaining > startup


@dataclass(eq=False)  # jobs are told apart by identity, never by comparing file bytes
class Job:
    """One file to parse; `tag` is the caller's, handed back with the outcome."""

    tag: Any
    data: bytes
    name: str


class _Slot:
    """One worker and the thread that talks to it, for the pool's life. Every process of the
    worker (the first, a replacement after a timeout) is started from this thread: Linux sends
    a parser its parent-death signal when the thread that started it ends, so a thread that
    ended with each call would take warm parsers with it."""

    def __init__(self, limits: ParseLimits, done: queue.SimpleQueue) -> None:
        self.worker = ParseWorker(limits)
        self.busy = False  # a job was handed to it and its outcome not yet read (main thread only)
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, args=(done,), name="rag-parse-feeder", daemon=True)
        self._thread.start()

    def start(self) -> None:
        """Have the thread launch the worker's process; returns once it is launched."""
        launched = threading.Event()
        self._inbox.put(launched)
        launched.wait()

    def give(self, call: int, job: Job) -> None:
        self.busy = True
        self._inbox.put((call, job))

    def stop(self) -> None:
        self._inbox.put(None)
        self._thread.join()
        self.worker.close()

    def _serve(self, done: queue.SimpleQueue) -> None:
        """Parse what the inbox hands over until told to stop; waits on the worker's pipe
        (which releases the GIL), so the run's thread stores results meanwhile."""
        while (message := self._inbox.get()) is not None:
            if isinstance(message, threading.Event):
                try:
                    self.worker.start()
                except OSError:
                    pass  # cannot spawn now: the first file tries again and reports it
                finally:
                    message.set()
                continue
            call, job = message
            try:
                outcome: Any = self.worker.parse(job.data, job.name)
            except (ParseError, ParseWorkerError) as exc:
                outcome = exc
            except OSError as exc:  # the pipe failed, not the file: the next run tries it again
                outcome = exc
            except EOFError as exc:
                outcome = OSError(f"the parser's pipe closed: {exc}")
            except Exception as exc:  # noqa: BLE001 -- a thread that died here would leave the run waiting for ever
                outcome = ParseError(f"parser failed unexpectedly: {type(exc).__name__}: {exc}")
            done.put((call, self, job, outcome))


class ParsePool:
    """Up to `size` parse workers, started as the work warrants and kept for the next call, so
    the shards a step process runs share them. `size` None is "auto": up to
    `machine_workers()`, and a parser is only added on a core that is idle at the time (several
    step processes of a run, or several runs, share the machine's cores); a number is the
    operator's, taken as given, memory permitting."""

    def __init__(self, limits: ParseLimits = ParseLimits(), size: int | None = None) -> None:
        self.limits = limits
        self.auto = size is None
        self.size = size if size is not None else machine_workers()
        if self.size < 1:
            raise ValueError(f"a parse pool needs at least one worker, got {size}")
        self._slots: list[_Slot] = []
        self._done: queue.SimpleQueue = queue.SimpleQueue()
        self._calls = 0  # outcomes of an earlier call that stopped early are told apart by this
        self._start_failed = False
        self._idle = IdleCpu()
        self.most_workers = 0  # the most workers that parsed side by side in the last parse_all

    def __enter__(self) -> ParsePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def starts(self) -> int:
        """Parser processes started so far, replacements after a timeout or crash included."""
        return sum(slot.worker.starts for slot in self._slots)

    def start(self) -> None:
        """Launch the first worker without waiting for its imports (see ParseWorker.start)."""
        if not self._slots:
            self._slots.append(_Slot(self.limits, self._done))
        if not self._slots[0].worker.alive:
            self._slots[0].start()

    def parse_all(self, jobs: Iterable[Job], total: int) -> Iterator[tuple[Job, dict[str, Any] | ParseError | OSError]]:
        """Each job with its parsed document (wire form), the ParseError that refused it, or
        the OSError of a pipe that failed under it (no verdict on the file), in the order they
        finish. `jobs` is read lazily, one job ahead of the workers, so only that
        many files are in memory; `total` (how many jobs there are) sizes the pool.

        Raises ParseWorkerError when no parser process can start at all."""
        self.start()
        self._calls += 1
        call, called = self._calls, time.monotonic()
        running = [slot for slot in self._slots if slot is self._slots[0] or slot.worker.alive]  # warm: free
        self.most_workers = 0
        source = iter(jobs)
        waiting: list[Job] = []  # read, not yet handed to a worker (a failed worker's job goes back here)
        counts = {"handed": 0, "total": total, "completed": 0}

        def read_one() -> None:
            if counts["handed"] < counts["total"]:
                job = next(source, None)
                if job is None:
                    counts["total"] = counts["handed"]
                else:
                    waiting.append(job)
                    counts["handed"] += 1

        def feed() -> None:
            """Hand a file to every idle worker, then read one more ahead of them."""
            for slot in running:
                if not slot.busy:
                    if not waiting:
                        read_one()
                    if waiting:
                        slot.give(call, waiting.pop(0))
            self.most_workers = max(self.most_workers, sum(slot.busy for slot in running))
            if not waiting:
                read_one()

        def remaining() -> int:
            return counts["total"] - counts["handed"] + len(waiting)

        clean_exit = False
        try:
            feed()
            while any(slot.busy for slot in running):
                try:
                    their_call, slot, job, outcome = self._done.get(timeout=POLL_SECONDS)
                except queue.Empty:
                    if self._grow(running, called, counts["completed"], remaining()):
                        feed()
                    continue
                if their_call != call:
                    continue  # an outcome nobody waits for any more, from a call that stopped early
                slot.busy = False
                if isinstance(outcome, ParseWorkerError):
                    self._retire(slot, running, outcome)
                    waiting.insert(0, job)  # another worker takes it
                    feed()
                    continue
                counts["completed"] += 1
                self._grow(running, called, counts["completed"], remaining())
                feed()  # the next file goes out before this result is stored
                yield job, outcome
            clean_exit = True
        finally:
            if not clean_exit:  # the caller stopped reading: no parser goes on with files nobody stores
                self._interrupt(running)

    def _interrupt(self, slots: list[_Slot]) -> None:
        for slot in slots:
            if slot.busy:
                slot.worker.interrupt()
                slot.busy = False

    def _grow(self, running: list[_Slot], called: float, completed: int, remaining: int) -> bool:
        """Start one more worker if it pays (see worth_another); the rate is measured from when
        this call's first worker was ready, never across its start-up."""
        if len(running) >= self.size or self._start_failed:
            return False  # a worker that could not start says the machine cannot take more now
        first = running[0].worker
        if not first.ready or first.ready_at is None or first.warming:
            return False  # no rate yet: a heavy stack's load is not parsing
        elapsed = time.monotonic() - max(first.ready_at, called)
        # a process that loads only the Markdown stack is ready in a fraction of a second, but a
        # new parser also costs its interpreter, memory and, at its first PDF, the heavy stack:
        # never weighed at less than the guess
        startup = max(first.startup_seconds or 0.0, STARTUP_GUESS_SECONDS)
        if not worth_another(elapsed=elapsed, completed=completed, remaining=remaining, startup=startup):
            return False
        if not room_for_another(self._idle.cores() if self.auto else None, _available_memory()):
            return False
        idle = [s for s in self._slots if s not in running]
        slot = idle[0] if idle else _Slot(self.limits, self._done)
        if not idle:
            self._slots.append(slot)
        running.append(slot)
        return True

    def _retire(self, slot: _Slot, running: list[_Slot], error: ParseWorkerError) -> None:
        """A worker that cannot start leaves the pool; the run fails only if none is left."""
        self._start_failed = True
        running.remove(slot)
        self._slots.remove(slot)
        slot.stop()
        if not running:
            raise error

    def close(self) -> None:
        self._interrupt(self._slots)  # a call abandoned without being closed may have left work running
        for slot in self._slots:
            slot.stop()
        self._slots = []
