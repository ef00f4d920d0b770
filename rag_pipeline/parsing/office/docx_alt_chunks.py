"""DOCX "alternative format chunks" (`w:altChunk`) read as paragraphs before python-docx reads
the document.

A Word document may hold part of its body, or all of it, as another file that Word converts when
it opens the document: HTML, MHT (HTML in a MIME message) or plain text, named by `w:altChunk`.
Converters from HTML to DOCX (html-docx-js and the like) write whole documents this way.
python-docx does not follow the reference, so such a document was refused as "no text found",
and a chunk inside an ordinary document was silently missing. Each chunk becomes the paragraphs
it shows, in place: HTML headings as Word headings ("Heading 1".."Heading 6" styles), list
items as "List Bullet", every other block as a paragraph. An RTF chunk, which would need an RTF reader, is left out with a warning."""

from __future__ import annotations

import email
import email.policy
import posixpath
import re
import zipfile
from typing import Any

from rag_pipeline.parsing.office.archive_parts import target_part

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
ALT_CHUNK = re.compile(rb"<(?:\w+:)?altChunk[\s>/]")
_RELATIONSHIP = re.compile(rb"<Relationship\b[^>]*>")
_STYLES = {**{f"h{n}": f"Heading{n}" for n in range(1, 7)}, "li": "ListBullet"}  # Word's built-in style ids
_BLOCK_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "pre", "td", "th", "dt", "dd", "blockquote", "div", "caption")


def alt_chunks_inlined(root: Any, archive: zipfile.ZipFile, part: str) -> tuple[bool, int]:
    """Each `w:altChunk` of the parsed `part` replaced by the paragraphs its target shows, in
    place. Returns whether any was, and how many chunks could not be read (RTF, missing)."""
    targets = part_targets(archive, part)
    inlined, unread = False, 0
    for chunk in list(root.iter(f"{{{W}}}altChunk")):
        data = _read(archive, targets.get(chunk.get(f"{{{R}}}id", "")))
        blocks = _blocks(data) if data is not None else None
        if blocks is None:
            unread += 1
            chunk.getparent().remove(chunk)
            continue
        parent, at = chunk.getparent(), chunk.getparent().index(chunk)
        parent.remove(chunk)
        for offset, (style, text) in enumerate(blocks):
            parent.insert(at + offset, paragraph_element(root, style, text))
        inlined = True
    return inlined, unread


def part_targets(archive: zipfile.ZipFile, part: str) -> dict[str, str]:
    """Relationship id -> the archive name of its target, for `part`'s relationships."""
    folder, name = posixpath.split(part)
    rels = posixpath.join(folder, "_rels", f"{name}.rels")
    try:
        xml = archive.read(rels)
    except KeyError:
        return {}
    out = {}
    for tag in _RELATIONSHIP.findall(xml):
        rid, target = re.search(rb'\bId="([^"]*)"', tag), re.search(rb'\bTarget="([^"]*)"', tag)
        if rid and target and b'TargetMode="External"' not in tag:
            out[rid.group(1).decode("utf-8", "replace")] = target_part(folder, target.group(1).decode("utf-8", "replace"))
    return out


def _read(archive: zipfile.ZipFile, name: str | None) -> bytes | None:
    if not name:
        return None
    try:
        return archive.read(name)
    except KeyError:
        return None


def _blocks(data: bytes) -> list[tuple[str | None, str]] | None:
    """(Word style id or None, text) of each block a chunk shows; None for a format not read."""
    from rag_pipeline.parsing.office.text import decode_html, normalize_whitespace

    head = data[:2048].lstrip().lower()
    if head.startswith(b"{\\rtf"):
        return None
    if head.startswith((b"mime-version", b"content-type", b"from:", b"message-id")) or b"\ncontent-type:" in head:
        html = _html_of_mht(data)
        if html is None:
            return None
    elif b"<" in head:
        html = decode_html(data)
    else:
        text = decode_html(data)
        return [(None, normalize_whitespace(line)) for line in re.split(r"\n\s*\n", text) if line.strip()]
    return _html_blocks(html)


def _html_of_mht(data: bytes) -> str | None:
    message = email.message_from_bytes(data, policy=email.policy.default)
    for part in message.walk():
        if part.get_content_type() == "text/html":
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                from rag_pipeline.parsing.office.text import decode_html

                return decode_html(payload)
    return None


def _html_blocks(html: str) -> list[tuple[str | None, str]]:
    """The innermost blocks of an HTML text, in order, after its hidden elements and scripts go."""
    from rag_pipeline.parsing.office.html_chrome import drop_hidden
    from rag_pipeline.parsing.office.html_tree import drop, parse_html_tree
    from rag_pipeline.parsing.office.text import normalize_whitespace

    root = parse_html_tree(html)
    if root is None:
        return []
    for node in list(root.iter("script", "style", "template", "head", "noscript")):
        drop(node)
    drop_hidden(root)
    blocks: list[tuple[str | None, str]] = []
    for node in root.iter(*_BLOCK_TAGS):
        if any(True for _ in node.iterdescendants(*_BLOCK_TAGS)):
            continue  # its inner blocks are read themselves
        text = normalize_whitespace(" ".join(node.itertext()))
        if text:
            blocks.append((_STYLES.get(node.tag), text))
    if not blocks and (text := normalize_whitespace(" ".join(root.itertext()))):
        blocks.append((None, text))  # text with no block around it: one paragraph
    return blocks


def paragraph_element(like: Any, style: str | None, text: str) -> Any:
    paragraph = like.makeelement(f"{{{W}}}p", {})
    if style is not None:
        properties = paragraph.makeelement(f"{{{W}}}pPr", {})
        properties.append(properties.makeelement(f"{{{W}}}pStyle", {f"{{{W}}}val": style}))
        paragraph.append(properties)
    run = paragraph.makeelement(f"{{{W}}}r", {})
    t = run.makeelement(f"{{{W}}}t", {"{http://www.w3.org/XML/1998/namespace}space": "preserve"})
    t.text = text
    run.append(t)
    paragraph.append(run)
    return paragraph
