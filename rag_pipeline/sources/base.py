"""What every source connector provides (dlt-style: a source yields records, the pipeline owns
state). A listing is all-or-nothing: any failure raises ListingError, so a partial listing can
never be mistaken for deletions."""

from __future__ import annotations

import fnmatch
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from rag_pipeline.common.text import storable, unstorable
from rag_pipeline.errors import PipelineError

# The longest URI the index keeps, in UTF-8 bytes: a URI is part of btree keys, which hold at
# most about 2.7 kB; S3 keys stop at 1 kB and no folder path a person reads is longer.
MAX_URI_BYTES = 2000
SHOWN_NAME_CHARS = 400  # a quarantined name is kept escaped and cut to this many characters


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
    """Configured deny patterns match the URI or its file name (e.g. '*.key', 'secrets/**'),
    both compared in Unicode NFC and case-folded: a deny list is a safety control, and it must
    not be sidestepped by a folder a Mac named decomposed ("Entwu\u0308rfe/" for a pattern typed
    "Entwürfe/*") or a file named "SERVER.KEY" (a share of a case-blind system holds both)."""
    folded = unicodedata.normalize("NFC", uri).casefold()
    name = folded.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(folded, p) or fnmatch.fnmatchcase(name, p)
               for p in (unicodedata.normalize("NFC", pattern).casefold() for pattern in patterns))


def name_problem(uri: str) -> str | None:
    """Why a listed URI cannot be a document's URI, or None: bytes that are not UTF-8 (lone
    surrogates once Python decoded the name), NUL, or a length no index key holds. Such an object
    is quarantined under `quarantine_name(uri)` and the rest of its source syncs as usual."""
    bad = unstorable(uri)
    if bad == "\x00":
        return "its name contains a NUL character, which the index cannot store; rename it"
    if bad is not None:
        return ("its name is not valid UTF-8 (shown here with the undecodable bytes as \\xNN); "
                "rename it to UTF-8, e.g. with convmv")
    size = len(uri.encode("utf-8"))
    if size > MAX_URI_BYTES:
        return f"its path is {size:,} bytes long; the index keeps paths up to {MAX_URI_BYTES:,} bytes: shorten it"
    return None


def quarantine_name(uri: str) -> str:
    """The name a problem URI is quarantined (and reported) under: escaped so it can be stored
    and printed, and cut short when it is absurdly long."""
    name = storable(uri)
    return name if len(name) <= SHOWN_NAME_CHARS else f"{name[:SHOWN_NAME_CHARS]}...({len(name):,} characters)"
