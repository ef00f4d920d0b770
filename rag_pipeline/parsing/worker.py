"""Parsing in a separate, killable process: a pathological file (a parser stuck in a loop, a
decompression that eats memory) costs one timeout and one quarantine entry, never the run.

The time limit is the worker's own CPU time spent on one file: on a busy machine a file waits
for a core without being charged for it, and start-up (imports of the parsing libraries,
paid in full before the worker reports ready) is never charged to any file, so one timeout
cannot cascade into the next file's. A wall-clock cap well above the limit stops a worker
that is stuck without using CPU (waiting on a lock or a pipe).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import resource
import sys
import time
from multiprocessing.connection import Connection
from typing import Any

from rag_pipeline.common.children import die_with_parent
from rag_pipeline.errors import PipelineError
from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.types import ParseError

WORKER_MEMORY_BYTES = 6 * 1024**3
STARTUP_SECONDS = 300  # imports of the parsing libraries, on a slow machine
WALL_CAP_FACTOR = 10  # wall-clock backstop: this many times max_seconds (at least WALL_CAP_MIN_SECONDS)
WALL_CAP_MIN_SECONDS = 60.0
POLL_SECONDS = 0.1


class ParseWorkerError(PipelineError):
    """The parser process cannot be started at all (not a problem of one file)."""


def _serve(conn: Connection, limits: ParseLimits) -> None:
    """Child loop: parse requests until the pipe closes."""
    try:
        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    except (ValueError, OSError):
        pass
    die_with_parent()
    _without_torch()
    from rag_pipeline.common import heap

    with heap.loading():  # the libraries stay for the worker's life: no collector passes over them
        from rag_pipeline.parsing import parse_document
        from rag_pipeline.parsing.warmup import STACKS, warm_up

        warm_up(stack="light")  # Markdown needs no more: a sync of edited Markdown never loads the rest
    conn.send(("ready", time.monotonic()))  # the system-wide clock: the parent times the start-up
    loaded = STACKS.index("light")
    while True:
        try:
            data, name = conn.recv()
        except (EOFError, OSError):
            return
        needed = STACKS.index(_stack_needed(data, name))
        if needed > loaded:
            conn.send(("warming",))  # the parent stops timing this file until "warmed"
            with heap.loading():
                warm_up(stack=STACKS[needed])  # every lazy import a first such file would pay, before it is timed
            loaded = needed
            conn.send(("warmed",))
        try:
            parsed = parse_document(data, name, limits)
            conn.send(("ok", parsed.to_dict()))
        except ParseError as exc:
            conn.send(("error", str(exc), exc.stage))
        except MemoryError:
            conn.send(("error", f"parsing needed more than {WORKER_MEMORY_BYTES >> 30} GiB of memory", "parse"))
        except Exception as exc:  # noqa: BLE001 -- a parser bug must become a quarantine entry
            conn.send(("error", f"parser failed unexpectedly: {type(exc).__name__}: {exc}", "parse"))


def _stack_needed(data: bytes, name: str) -> str:
    """The libraries parsing this file loads (warmup.stack_for): the worker loads them, untimed,
    before the first file that needs them, so a sync of edited text files never loads PyMuPDF."""
    from rag_pipeline.parsing import detect_kind
    from rag_pipeline.parsing.warmup import stack_for

    try:
        return stack_for(detect_kind(data, name))
    except ParseError:
        return "light"  # refused before any parser runs


def _without_torch() -> None:
    """Parsing never uses torch, but spaCy's thinc imports it whenever it is installed (it is:
    the embedding model needs it): 2 s of the parser's start-up and 185 MiB of its memory, spent
    while the run's own process loads torch for the model. Marked absent, thinc takes its numpy
    path, as on a machine without torch; spaCy's pipelines give the same results on it."""
    sys.modules.setdefault("torch", None)  # type: ignore[assignment] -- None: "import torch" raises ImportError


class ParseWorker:
    """One long-lived parser process (imports are paid once), replaced after a timeout or crash.

    `start` only launches the process: its imports (seconds) run while the caller does other
    work, such as loading the embedding model; the first `parse` waits for it to be ready."""

    def __init__(self, limits: ParseLimits = ParseLimits()) -> None:
        self.limits = limits
        self._ctx = mp.get_context("spawn")  # never fork a process that holds torch threads
        self._proc: Any = None
        self._conn: Connection | None = None
        self._ready = False
        self.starts = 0  # processes started so far (a timeout or crash starts a new one)
        self.startup_seconds: float | None = None  # launch to ready, of the last process that started
        self.ready_at: float | None = None  # time.monotonic() (system-wide) when it became ready
        self.warming = False  # loading more of the parsing stack for the first file that needs it (warmup.STACKS)
        self._launched = 0.0

    def __enter__(self) -> ParseWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def alive(self) -> bool:
        """A process is running (starting or ready): using it costs no start-up."""
        return self._proc is not None and self._proc.is_alive()

    @property
    def ready(self) -> bool:
        """The process has finished its imports and parses (or is parsing) files."""
        return self._ready

    def start(self) -> None:
        """Launch the process unless one is running; returns at once."""
        if self.alive:
            return
        self._kill()
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_serve, args=(child, self.limits), name="rag-parse-worker")
        self._proc.start()
        child.close()
        self._conn, self._ready = parent, False
        self._launched = time.monotonic()
        self.starts += 1

    def _ensure(self) -> Connection:
        self.start()
        assert self._conn is not None
        if not self._ready:
            try:
                reply = self._conn.recv() if self._conn.poll(STARTUP_SECONDS) else None
            except (EOFError, OSError):
                reply = None
            self._ready = isinstance(reply, tuple) and reply[0] == "ready"
            if self._ready:
                self.ready_at = reply[1]
                self.startup_seconds = max(0.0, self.ready_at - self._launched)
            if not self._ready:
                self._proc.join(1)
                code = self._proc.exitcode
                self._kill()
                what = f"exited with code {code} while starting" if code is not None else \
                    f"did not start within {STARTUP_SECONDS} s"
                raise ParseWorkerError(
                    f"the parser process {what}; check that the parsing packages import "
                    "(python -c 'import rag_pipeline.parsing')"
                )
        return self._conn

    def parse(self, data: bytes, name: str) -> dict[str, Any]:
        """The parsed document in wire form (see from_wire), or ParseError."""
        conn = self._ensure()
        conn.send((data, name))
        while True:
            if not self._wait_for_reply(conn):
                self._kill()
                raise ParseError(
                    f"parsing took longer than {self.limits.max_seconds:.0f} s of CPU time and was stopped; "
                    "split the file or raise limits.max_seconds"
                )
            reply = self._receive(conn)
            if reply[0] != "warming":
                break
            self.warming, started = True, time.monotonic()
            try:
                self._await_warm_up(conn)  # the file is parsed (and timed) from here
            finally:
                self.warming = False
            # the heavy stack's load is start-up too: the pool weighs a new parser by it and
            # measures the parsing rate from here, not across the load
            self.ready_at = time.monotonic()
            self.startup_seconds = (self.startup_seconds or 0.0) + (self.ready_at - started)
        if reply[0] == "ok":
            return reply[1]
        raise ParseError(reply[1], stage=reply[2])

    def _await_warm_up(self, conn: Connection) -> None:
        """The first file that needs PyMuPDF or unstructured: their imports are not its time,
        and a process that cannot load them is a broken installation, not a bad file."""
        try:
            reply = conn.recv() if conn.poll(STARTUP_SECONDS) else None
        except (EOFError, OSError):
            reply = None
        if reply == ("warmed",):
            return
        if self._proc is not None:
            self._proc.join(1)
        code = self._proc.exitcode if self._proc else None
        self._kill()
        what = f"exited with code {code} while loading" if code is not None else f"did not load within {STARTUP_SECONDS} s"
        raise ParseWorkerError(f"the parser process {what} the parsing libraries; check that the parsing packages "
                               "import (python -c 'import rag_pipeline.parsing.warmup as w; w.warm_up()')")

    def _receive(self, conn: Connection) -> tuple:
        try:
            return conn.recv()
        except (EOFError, OSError):
            code = self._proc.exitcode if self._proc else None
            self._kill()
            raise ParseError(f"the parser process died (exit code {code}) on this file; it may be malformed") from None

    def _wait_for_reply(self, conn: Connection) -> bool:
        """Wait until the worker answers (True) or has used max_seconds of CPU on this file,
        or the wall-clock cap has passed (False)."""
        limit = self.limits.max_seconds
        wall_cap = max(WALL_CAP_FACTOR * limit, WALL_CAP_MIN_SECONDS)
        pid = self._proc.pid
        cpu_start = process_cpu_seconds(pid)
        wall_start = time.monotonic()
        while not conn.poll(POLL_SECONDS):
            wall = time.monotonic() - wall_start
            cpu_now = process_cpu_seconds(pid)
            if cpu_start is None or cpu_now is None:  # no /proc: wall clock is all there is
                used = wall
            else:
                used = cpu_now - cpu_start
            if used > limit or wall > wall_cap:
                return conn.poll(0)
        return True

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join(5)
        if self._conn is not None:
            self._conn.close()
        self._proc, self._conn, self._ready = None, None, False

    def interrupt(self) -> None:
        """Kill the process from another thread than the one using the worker: that thread's
        wait ends as if the parser had crashed, and it cleans up (see ParsePool)."""
        proc = self._proc
        if proc is not None and proc.is_alive():
            proc.kill()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._proc is not None:
            self._proc.join(5)
            if self._proc.is_alive():
                self._proc.kill()
        self._proc, self._conn, self._ready = None, None, False


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process and of its children it has waited for (OCR runs
    Tesseract as a child), from /proc; None where /proc is not available."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # the command name may contain spaces
    utime, stime, cutime, cstime = (int(v) for v in fields[11:15])
    return (utime + stime + cutime + cstime) / _CLOCK_TICKS
