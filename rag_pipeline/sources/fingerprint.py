"""A cheap fingerprint of a source's listing, for sensors that ask "did anything change?"
every few seconds: names, sizes and modification times only, no bytes read, no parsing. Equal
fingerprints mean a sync would find nothing to do; a different one means it may find something
(a touched but identical file costs one sync that publishes nothing).

"Fingerprint" means one thing in this project: what a listing says about content without its
bytes being read, the whole listing's digest here and each listed object's (an S3 ETag+size,
store.source_fingerprints). Hashes of content that was read have other names: a document's
`checksum`/`sha256`, the paragraph digests that find notices (cleaning.notices)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from rag_pipeline.sources.base import ListingError
from rag_pipeline.sources.config import SourceConfig


def listing_fingerprint(config: SourceConfig) -> str | None:
    """SHA-256 over the listing, or None for a kind that cannot be fingerprinted cheaply yet."""
    if config.kind == "filesystem" and config.path is not None:
        return _folder_fingerprint(config.path)
    return None


def _folder_fingerprint(root: Path) -> str:
    """Every entry under `root` (access files included: an access change must trigger a sync)."""
    digest = hashlib.sha256()
    errors: list[str] = []
    if not root.is_dir():
        raise ListingError(f"source folder {root} does not exist or is not a folder")
    for folder, dirs, files in os.walk(root, onerror=lambda exc: errors.append(str(exc))):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError as exc:
                errors.append(str(exc))
                continue
            rel = os.path.relpath(path, root)
            digest.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_mode}\n".encode("utf-8", "surrogateescape"))
    if errors:
        raise ListingError(f"cannot list {root}: {errors[0]}")
    return digest.hexdigest()
