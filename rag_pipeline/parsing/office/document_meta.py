"""What a file says about itself beyond its text: its title property and which paragraphs are
wholly bold. Both feed the chunker (the title names every chunk's document; a bold paragraph
may be a heading where the file has no heading styles). Nothing here may fail a parse: a
missing or damaged property only means no title."""

from __future__ import annotations

import html
import re
import zipfile
from io import BytesIO
from typing import Any

from lxml import etree

from rag_pipeline.parsing.office.html_tree import parse_html_tree
from rag_pipeline.parsing.office.text import normalize_whitespace

_TITLE_RE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.I | re.S)
_BOLD_STYLE_RE = re.compile(r"font-weight\s*:\s*(?:bold|bolder|[6-9]00)\b", re.I)
_XML_DECLARATION_RE = re.compile(r"^\s*<\?xml[^>]*\?>")
_CORE_MAX_BYTES = 1024 * 1024
_MAX_BOLD_CHARS = 300  # longer bold blocks are emphasis, never headings: not worth marking


def html_title(text: str) -> str | None:
    """The <title> of an HTML page (entities decoded), from its first 200,000 characters."""
    match = _TITLE_RE.search(text[:200_000])
    return html.unescape(match.group(1)) if match else None


def core_title(data: bytes) -> str | None:
    """dc:title from docProps/core.xml of a DOCX/PPTX package (the archive is already checked)."""
    try:
        with zipfile.ZipFile(BytesIO(data)) as archive:
            info = archive.getinfo("docProps/core.xml")
            if info.file_size > _CORE_MAX_BYTES:
                return None
            xml = archive.read(info)
        parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
        root = etree.fromstring(xml, parser=parser)
    except (KeyError, zipfile.BadZipFile, etree.XMLSyntaxError, ValueError, OSError):
        return None
    node = root.find("{http://purl.org/dc/elements/1.1/}title")
    return node.text if node is not None and node.text else None


def html_bold_texts(main_html: str) -> set[str]:
    """Whitespace-normalised texts of short blocks (p, div) whose text is all bold, by <b>,
    <strong> or a font-weight style: SEC filings style their headings that way."""
    root = parse_html_tree(_XML_DECLARATION_RE.sub("", main_html, count=1))  # XHTML filings start with one
    if root is None:
        return set()
    out = set()
    for block in root.iter("p", "div"):
        if any(child.tag in ("p", "div", "table", "ul", "ol") for child in block.iterdescendants()):
            continue
        text = normalize_whitespace(block.text_content())
        if text and len(text) <= _MAX_BOLD_CHARS and _all_bold(block, text):
            out.add(text)
    return out


def _all_bold(block: Any, text: str) -> bool:
    if _is_bold(block):
        return True
    bold = "".join(normalize_whitespace(n.text_content()) for n in block.iterdescendants()
                   if _is_bold(n) and not _inside_bold(n, block))
    return len(bold.replace(" ", "")) >= len(text.replace(" ", ""))


def _inside_bold(node: Any, block: Any) -> bool:
    """True when a bold element between `node` and `block` already counted node's text."""
    for ancestor in node.iterancestors():
        if ancestor is block:
            return False
        if _is_bold(ancestor):
            return True
    return False


def _is_bold(node: Any) -> bool:
    if not isinstance(node.tag, str):
        return False
    return node.tag in ("b", "strong") or bool(_BOLD_STYLE_RE.search(node.get("style") or ""))
