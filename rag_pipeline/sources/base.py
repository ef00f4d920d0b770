"""What every source connector provides (dlt-style: a source yields records, the pipeline owns
state). A listing is all-or-nothing: any failure raises ListingError, so a partial listing can
never be mistaken for deletions."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from rag_pipeline.errors import PipelineError


class ListingError(PipelineError):
    """The source could not be listed completely; nothing may be tombstoned from it."""


class ObjectReadError(PipelineError):
    """A listed object could not be read now (deleted or replaced since the listing): it is
    quarantined for this run, never tombstoned; the next listing shows its real state."""


@dataclass(frozen=True)
class SourceObject:
    uri: str  # stable across syncs: the path relative to the source root, '/'-separated
    checksum: str  # 'sha256:<hex>' or 'etag:<etag>'
    size: int
    acl_groups: tuple[str, ...]  # empty = visible to nobody (default deny)


@dataclass(frozen=True)
class SkippedObject:
    """An object the listing saw but cannot offer (unreadable, access file broken for it...)."""

    uri: str
    reason: str


class Source(Protocol):
    name: str

    def list_objects(self) -> Iterator[SourceObject | SkippedObject]:
        """Every indexable object with checksum and ACL groups; raises ListingError."""
        ...

    def read(self, uri: str) -> bytes:
        """The object's bytes now (the pipeline re-checks the checksum)."""
        ...


def is_denied(uri: str, patterns: Sequence[str]) -> bool:
    """Configured deny patterns match the URI or its file name (e.g. '*.key', 'secrets/**')."""
    name = uri.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(uri, p) or fnmatch.fnmatchcase(name, p) for p in patterns)
