"""The work item as the steps see it: one document of the run with the payload each step left.

The store keeps work items as rows (`run_items`, one JSON column per step's output, see
store/work_items.py); the sync layer reads a row into a `WorkItem` once, at the boundary
(batches.work_batches), and writes a payload back with its record's `to_dict()`. The JSON
written is exactly what earlier versions wrote, so a run interrupted before an upgrade resumes
after it: keys an older item may lack take the defaults the steps always gave them, and a
payload that cannot be read stops the step with the document, the step and what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from rag_pipeline.chunking.chunks import Chunk
from rag_pipeline.errors import PipelineError
from rag_pipeline.parsing.types import Element, ParsedDocument


class StoredItemError(PipelineError):
    """A work item's stored payload cannot be read (written by another version, or damaged)."""


@dataclass
class Parsed:
    """Output of parse (column `parsed`): the document after redaction, and what redaction
    removed, by kind, for the clean step's counts."""

    document: ParsedDocument
    safety: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {**self.document.to_dict(), "safety": dict(self.safety)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Parsed:
        return cls(document=ParsedDocument.from_dict(dict(data)), safety=dict(data.get("safety") or {}))


@dataclass
class Cleaned:
    """Output of clean (column `cleaned`): the elements left, and what was removed, by kind."""

    elements: list[Element]
    parser: str
    cleaning: dict[str, int] = field(default_factory=dict)
    title: str | None = None  # the redacted title property, for the chunks' identity line

    def to_dict(self) -> dict[str, Any]:
        return {"elements": [e.to_dict() for e in self.elements], "parser": self.parser,
                "cleaning": dict(self.cleaning), "title": self.title}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Cleaned:
        return cls(elements=[Element.from_dict(e) for e in data["elements"]], parser=str(data["parser"]),
                   cleaning=dict(data.get("cleaning") or {}), title=data.get("title"))


@dataclass
class Chunked:
    """Output of chunk (column `chunks`): the chunks, with what stage records on the version."""

    chunks: list[Chunk]
    parser: str
    cleaning: dict[str, int] = field(default_factory=dict)
    title: str | None = None
    language: str | None = None  # detected from the cleaned text: the full-text search configuration

    def to_dict(self) -> dict[str, Any]:
        # "elements": None is what the stored form has always said: the cleaned elements are gone
        return {"elements": None, "parser": self.parser, "cleaning": dict(self.cleaning), "title": self.title,
                "chunks": [c.to_dict() for c in self.chunks], "language": self.language}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Chunked:
        return cls(chunks=[Chunk.from_dict(c) for c in data["chunks"]], parser=str(data["parser"]),
                   cleaning=dict(data.get("cleaning") or {}), title=data.get("title"), language=data.get("language"))


def embeddings_to_bytes(matrix: np.ndarray) -> bytes:
    """Column `embeddings`: the document's chunk vectors, float32, row by row."""
    return matrix.astype(np.float32).tobytes()


def embeddings_from_bytes(data: bytes, rows: int) -> np.ndarray:
    """The matrix back, one row per chunk (an empty one for a document without chunks)."""
    if rows == 0:
        return np.zeros((0, 1), np.float32)
    return np.frombuffer(data, dtype=np.float32).reshape(rows, -1)


@dataclass
class WorkItem:
    """One document of the run: what plan recorded, and the payload the last step wrote (the
    store drops each payload once the next step has its own, so at most one or two are set)."""

    source: str
    uri: str
    action: str  # new, changed, reparse (content goes through parse .. embed), acl_changed, gone
    checksum: str | None = None
    blob_sha256: str | None = None
    size_bytes: int | None = None
    acl_groups: list[str] = field(default_factory=list)
    parsed: Parsed | None = None
    cleaned: Cleaned | None = None
    chunked: Chunked | None = None
    embeddings: np.ndarray | None = None  # one row per chunk of `chunked`

    @classmethod
    def from_row(cls, row: Mapping[str, Any], step: str, needs: tuple[str, ...] = ()) -> WorkItem:
        """The item from a `run_items` row (store.work_items.load_items). `step` is the step
        reading it and `needs` the stored columns it cannot do without (`parsed`, `cleaned`,
        `chunks`, `embeddings`): both are named in the error when a payload is absent or
        cannot be read."""
        uri = str(row.get("uri"))
        for column in needs:
            if row.get(column) is None:
                raise StoredItemError(f"work item {uri!r} at step {step}: no stored {column} output, though the item "
                                      "is waiting for this step; run the sync again from the start")
        item = cls(source=_field(row, "source", uri, step), uri=uri, action=_field(row, "action", uri, step),
                   checksum=row.get("checksum"), blob_sha256=row.get("blob_sha256"), size_bytes=row.get("size_bytes"),
                   acl_groups=list(row.get("acl_groups") or []))
        item.parsed = _payload(row, "parsed", Parsed.from_dict, uri, step)
        item.cleaned = _payload(row, "cleaned", Cleaned.from_dict, uri, step)
        item.chunked = _payload(row, "chunks", Chunked.from_dict, uri, step)
        if row.get("embeddings") is not None:
            rows = len(item.chunked.chunks) if item.chunked is not None else 0
            item.embeddings = _read(lambda: embeddings_from_bytes(bytes(row["embeddings"]), rows), "embeddings", uri, step)
        return item


T = TypeVar("T")


def _field(row: Mapping[str, Any], name: str, uri: str, step: str) -> str:
    if row.get(name) is None:
        raise StoredItemError(f"work item {uri!r} at step {step}: the stored row lacks {name!r}")
    return str(row[name])


def _payload(row: Mapping[str, Any], column: str, read: Callable[[Mapping[str, Any]], T], uri: str, step: str) -> T | None:
    data = row.get(column)
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise StoredItemError(f"work item {uri!r} at step {step}: the stored {column} output is "
                              f"{type(data).__name__}, not an object; run the sync again from the start")
    return _read(lambda: read(data), column, uri, step)


def _read(read: Callable[[], T], column: str, uri: str, step: str) -> T:
    try:
        return read()
    except KeyError as exc:
        what = f"lacks {exc.args[0]!r}"
    except (TypeError, ValueError, AttributeError) as exc:
        what = f"cannot be read ({exc})"
    raise StoredItemError(f"work item {uri!r} at step {step}: the stored {column} output {what} "
                          "(written by another version of rag_pipeline?); run the sync again from the start")
