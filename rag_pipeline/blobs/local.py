"""The blob store in a local folder, the default (`state_dir/blobs`)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from rag_pipeline.blobs.base import BlobReadError, blob_name


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
