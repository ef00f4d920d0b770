"""A few database connections shared by the screen's requests (each request borrows one, in a
worker thread): opening a connection per request would cost more than a queue page's query."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from rag_pipeline.store import database


class Pool:
    def __init__(self, url: str, size: int = 4) -> None:
        self._url, self._idle, self._lock = url, queue.LifoQueue[psycopg.Connection](), threading.Semaphore(size)

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A connection for one request; a broken one is closed instead of returned."""
        with self._lock:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                conn = database.connect(self._url)
            try:
                yield conn
            except BaseException:
                if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE or conn.broken:
                    conn.close()
                    raise
                self._idle.put(conn)
                raise
            if conn.broken or conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                conn.close()
            else:
                self._idle.put(conn)

    def close(self) -> None:
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return
