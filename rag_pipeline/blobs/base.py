"""What every blob store is: content-addressed raw source bytes, so any historical version can be
shown and re-parsed after its source changed or vanished."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class BlobReadError(OSError):
    """A blob is missing, corrupt or its store unreachable (an OSError: a read-stage failure)."""


class Blobs(Protocol):
    def put(self, data: bytes) -> str: ...

    def get(self, sha256: str) -> bytes: ...

    def delete(self, sha256: str) -> None: ...


def blob_name(sha256: str) -> str:
    """`ab/abcdef...`: the one naming scheme of every blob store."""
    if len(sha256) != 64 or not all(c in "0123456789abcdef" for c in sha256):
        raise ValueError(f"not a SHA-256 hex digest: {sha256!r}")
    return f"{sha256[:2]}/{sha256}"


class ChainedBlobs:
    """Writes go to the configured store; reads fall back to the others, so versions whose
    blobs were written before the store was switched (local folder -> bucket) stay readable."""

    def __init__(self, primary: Blobs, fallbacks: Sequence[Blobs] = ()) -> None:
        self.primary = primary
        self.fallbacks = tuple(fallbacks)

    def put(self, data: bytes) -> str:
        return self.primary.put(data)

    def get(self, sha256: str) -> bytes:
        try:
            return self.primary.get(sha256)
        except FileNotFoundError:
            for store in self.fallbacks:
                try:
                    return store.get(sha256)
                except FileNotFoundError:
                    continue
            raise

    def delete(self, sha256: str) -> None:
        """Gone from every store the chain reads, so no fallback can serve the bytes again."""
        for store in (self.primary, *self.fallbacks):
            store.delete(sha256)
