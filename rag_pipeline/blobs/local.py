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
        """Store `data` under its SHA-256. A blob already there is trusted only after its bytes
        are checked: one corrupted or truncated on disk is rewritten from these (the source's)
        bytes, so the store heals the next time the same bytes are read."""
        sha256 = hashlib.sha256(data).hexdigest()
        path = self._path(sha256)
        if self._intact(path, sha256, len(data)):
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

    @staticmethod
    def _intact(path: Path, sha256: str, size: int) -> bool:
        try:
            if path.stat().st_size != size:
                return False
            return hashlib.sha256(path.read_bytes()).hexdigest() == sha256
        except OSError:  # missing (or unreadable): written anew
            return False

    def get(self, sha256: str) -> bytes:
        data = self._path(sha256).read_bytes()
        if hashlib.sha256(data).hexdigest() != sha256:
            raise BlobReadError(f"blob {sha256} is corrupt on disk ({self._path(sha256)})")
        return data

    def delete(self, sha256: str) -> None:
        """Remove a blob whose bytes must not be kept (a refused file holding a private key);
        one already gone is fine: deleting twice is what a retried step does."""
        self._path(sha256).unlink(missing_ok=True)
