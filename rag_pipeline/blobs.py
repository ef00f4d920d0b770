"""Content-addressed store of raw source bytes, so any historical version can be shown and
re-parsed after its source changed or vanished."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rag_pipeline.config import Config


class BlobReadError(OSError):
    """A blob is missing, corrupt or its store unreachable (an OSError: a read-stage failure)."""


class Blobs(Protocol):
    def put(self, data: bytes) -> str: ...

    def get(self, sha256: str) -> bytes: ...


def blob_name(sha256: str) -> str:
    """`ab/abcdef...`: the one naming scheme of every blob store."""
    if len(sha256) != 64 or not all(c in "0123456789abcdef" for c in sha256):
        raise ValueError(f"not a SHA-256 hex digest: {sha256!r}")
    return f"{sha256[:2]}/{sha256}"


class BlobStore:
    """A local folder of blobs named by SHA-256 (`ab/abcdef...`). Writes are atomic renames, so
    a crash never leaves a truncated blob under a valid name."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, sha256: str) -> Path:
        return self.root / blob_name(sha256)

    def put(self, data: bytes) -> str:
        sha256 = hashlib.sha256(data).hexdigest()
        path = self._path(sha256)
        if path.exists():
            return sha256
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return sha256

    def get(self, sha256: str) -> bytes:
        data = self._path(sha256).read_bytes()
        if hashlib.sha256(data).hexdigest() != sha256:
            raise BlobReadError(f"blob {sha256} is corrupt on disk ({self._path(sha256)})")
        return data


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


def open_blob_store(config: Config) -> Blobs:
    """The configured blob store: the local folder by default, a bucket with `blob_store`."""
    local = BlobStore(config.blob_dir)
    if config.blob_store is None:
        return local
    from rag_pipeline.blobs_s3 import S3BlobStore
    from rag_pipeline.s3 import make_client

    client, counter = make_client(endpoint_url=config.blob_store.endpoint_url, region=config.blob_store.region)
    return ChainedBlobs(S3BlobStore(client, config.blob_store.url, counter), [local])
