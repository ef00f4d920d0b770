"""An Office file (a ZIP archive) written again with some of its parts replaced: how the DOCX and
PPTX rewrites (docx_wrappers.py, superscript_runs.py) hand their changes to the partitioners, and
how a package whose relationships point at missing parts is made readable."""

from __future__ import annotations

import posixpath
import re
import zipfile
from io import BytesIO


def with_parts(archive: zipfile.ZipFile, changed: dict[str, bytes]) -> bytes:
    """The archive's bytes with each part named in `changed` replaced, every other part and every
    entry's metadata as they were."""
    out = BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as rewritten:
        for info in archive.infolist():
            rewritten.writestr(info, changed.get(info.filename) or archive.read(info.filename))
    return out.getvalue()


_RELATIONSHIP = re.compile(rb"<(?:\w+:)?Relationship\b[^>]*?(?:/>|>\s*</(?:\w+:)?Relationship>)")
_TARGET = re.compile(rb'\bTarget="([^"]*)"')


def target_part(source: str, target: str) -> str:
    """The archive name a relationship `target` of a part in folder `source` points at, resolved
    as python-docx and python-pptx resolve it (PackURI.from_rel_ref): from the package root,
    "../" above the root staying at the root, nothing decoded."""
    return posixpath.normpath(posixpath.join("/" + source, target)).lstrip("/")


def dangling_relationships_dropped(archive: zipfile.ZipFile) -> tuple[dict[str, bytes], int]:
    """Relationship parts rewritten without their internal relationships to parts the package
    does not hold (name -> bytes; empty when there are none), and how many were dropped.
    python-docx and python-pptx load every relationship's target and refused the whole file
    over one missing picture or chart, where Word and PowerPoint open it and show the rest."""
    names = set(archive.namelist())
    changed, dropped = {}, 0
    for name in sorted(n for n in names if n.endswith(".rels")):
        xml = archive.read(name)
        source = posixpath.dirname(posixpath.dirname(name))  # "word/_rels/document.xml.rels" -> "word"
        pieces = _kept_pieces(xml, source, names)
        if len(pieces) > 1:
            changed[name] = b"".join(pieces)
            dropped += len(pieces) - 1
    return changed, dropped


def without_dangling_relationships(data: bytes) -> bytes:
    """The package `data` with `dangling_relationships_dropped` applied (itself when none are)."""
    with zipfile.ZipFile(BytesIO(data)) as archive:
        changed, _ = dangling_relationships_dropped(archive)
        return with_parts(archive, changed) if changed else data


def _kept_pieces(xml: bytes, source: str, names: set[str]) -> list[bytes]:
    """`xml` in pieces, cut where a relationship whose target is missing was taken out."""
    pieces, at = [], 0
    for tag in _RELATIONSHIP.finditer(xml):
        if _dangling(tag.group(0), source, names):
            pieces.append(xml[at:tag.start()])
            at = tag.end()
    return [*pieces, xml[at:]]


def _dangling(tag: bytes, source: str, names: set[str]) -> bool:
    target = _TARGET.search(tag)
    if re.search(rb'\bTargetMode="External"', tag) or target is None or not target.group(1):
        return False
    return target_part(source, target.group(1).decode("utf-8", "replace")) not in names
