"""Helper processes for the chunk step, beside the step's own process.

Why: chunking is pure Python (language detection, tokenising each candidate chunk), so the step
kept one core busy while the others idled: 15 s of a 1,000-document first sync on 2 cores
(bench/README.md, issue 28). Helpers take documents as the step offers them, IN_FLIGHT each at a
time, while the step's process goes on chunking the others itself: no document waits for a
helper's start-up (a second of imports), and a sync of a few edited files starts none.

The chunks are the same wherever they are made: a helper runs the step's own function
(`chunk_document.chunk_document`) with the same tokenizer file, and sends back the token ids of each
chunk's model input so the encoder in this process reuses them as it reuses its own (tested).

A helper that dies, cannot start, or fails on a document hands the document back: the step
chunks it itself (a failure there names the document, sync/failures.py, as without helpers) and
offers the helpers nothing more. Helpers are started only on cores that are idle when the step
starts, so step processes run side by side (the multiprocess executor) do not each fill the
machine.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from rag_pipeline.common.cpus import usable_cores
from rag_pipeline.sync.items import Chunked, WorkItem

log = logging.getLogger(__name__)

MIN_DOCUMENTS = 32  # fewer documents than this are chunked in the step's process alone
IN_FLIGHT = 4  # documents handed to each helper at a time (enough that it never waits for the step)
MAX_HELPERS = 7
IDLE_WINDOW_SECONDS = 0.1  # how long idle cores are measured before helpers are started

Done = tuple[Chunked, list[np.ndarray]]  # a document's chunks and the token ids of each chunk's model input


def helpers_wanted(documents: int, model_dir: Path, measure_idle: Callable[[], float | None] | None = None) -> int:
    """Helper processes worth starting: none for a small batch or without the model's
    tokenizer.json (the helpers count tokens with it); else one per idle core beyond the one
    this process works on (`measure_idle`, default: measured now), at most MAX_HELPERS."""
    cores = usable_cores()
    if documents < MIN_DOCUMENTS or cores < 2 or not (model_dir / "tokenizer.json").is_file():
        return 0
    idle = (measure_idle or idle_cores)()
    free = cores if idle is None else min(cores, int(idle + 0.5))
    return max(0, min(free - 1, MAX_HELPERS))


def idle_cores() -> float | None:
    """Idle cores over a short window (the parse pool's measure, /proc/stat)."""
    from rag_pipeline.parsing.pool import IdleCpu

    idle = IdleCpu(window=IDLE_WINDOW_SECONDS)
    time.sleep(IDLE_WINDOW_SECONDS)
    return idle.cores()


class ChunkHelpers:
    """Up to `helpers` processes chunking the documents offered to them; `finished` hands back
    each offered document with its result, or with None where the step must chunk it itself."""

    def __init__(self, model_dir: Path, max_tokens: int, helpers: int) -> None:
        self._pending: deque[tuple[WorkItem, Future]] = deque()
        self._room = helpers * IN_FLIGHT
        self._pool: ProcessPoolExecutor | None = None
        if helpers > 0:
            self._pool = ProcessPoolExecutor(helpers, mp_context=mp.get_context("spawn"), initializer=_start,
                                             initargs=(str(model_dir), max_tokens))

    def __enter__(self) -> ChunkHelpers:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def offer(self, item: WorkItem) -> bool:
        """Hand the document to a helper if one has room; False: the step chunks it itself."""
        if self._pool is None or len(self._pending) >= self._room:
            return False
        try:
            future = self._pool.submit(_chunk, item.cleaned, item.uri)
        except Exception as exc:  # noqa: BLE001 -- broken (a helper died), shut down, or no process may start here
            self._give_up(exc)
            return False
        self._pending.append((item, future))
        return True

    def finished(self, wait: bool = False) -> Iterator[tuple[WorkItem, Done | None]]:
        """Offered documents whose helper is done (with `wait`: all of them, waiting), each with
        its result, or None where the helper failed and the step must chunk it itself."""
        while self._pending and (wait or self._pending[0][1].done()):
            item, future = self._pending.popleft()
            try:
                yield item, future.result()
            except Exception as exc:  # noqa: BLE001 -- any failure: the step redoes the document itself
                self._give_up(exc, item.uri)
                yield item, None

    def _give_up(self, exc: BaseException, uri: str | None = None) -> None:
        if self._pool is None:
            return
        log.warning("chunk helper failed%s (%s: %s); the step chunks the rest itself",
                    f" on {uri}" if uri else "", type(exc).__name__, exc)
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = None
        self._room = 0


_helper: dict[str, Any] = {}


def _start(model_dir: str, max_tokens: int) -> None:
    """In the helper: load the tokenizer and langdetect's profiles once."""
    from rag_pipeline.common.children import die_with_parent
    from rag_pipeline.common.language_detection import new_detector
    from rag_pipeline.embedding.tokens import fast_token_ids

    die_with_parent()
    token_ids = fast_token_ids(Path(model_dir))
    if token_ids is None:
        raise RuntimeError(f"no readable tokenizer.json in {model_dir}")
    new_detector()
    _helper.update(token_ids=token_ids, max_tokens=max_tokens)


def _chunk(cleaned: Any, uri: str) -> Done:
    """In the helper: the step's own chunking of one document, and its chunks' token ids."""
    from rag_pipeline.sync.chunk_document import chunk_document

    token_ids = _helper["token_ids"]
    chunked = chunk_document(cleaned, uri, token_ids.count, _helper["max_tokens"])
    return chunked, token_ids.ids([c.search_text for c in chunked.chunks])
