"""DOCX text that python-docx does not look into, moved where it does before unstructured reads
the file.

python-docx (and so unstructured's DOCX partitioner) reads the runs directly under a paragraph
and the paragraphs and tables directly under the body or a cell. Word puts text inside other
wrappers, and all of it was silently missing from the index:
- tracked changes not yet accepted: an insertion (`w:ins`, `w:moveTo`) holds its runs;
- content controls (`w:sdt`, the fields of forms and templates: a cover page's title, a
  "document owner" box, whole sections) hold runs, paragraphs, tables, rows or cells;
- simple fields (`w:fldSimple`: a date, a cross-reference, a document property), smart tags and
  custom XML hold runs or blocks;
- text boxes (`w:txbxContent`, in a drawing inside a run) hold whole paragraphs;
- footnotes and endnotes live in parts of their own, which python-docx never opens.
So the document (and its headers, footers, footnotes) is rewritten first, as Word shows it with
every change accepted: insertions and wrappers are replaced by what they hold, deletions
(`w:del`, `w:moveFrom`) are dropped, and a text box's paragraphs follow the paragraph that
anchors it (its VML fallback copy, kept for old readers, is skipped), and so do a note's
paragraphs after the paragraph that refers to it. A file holding none of these is passed on
byte for byte.
"""

from __future__ import annotations

import copy
import re
import zipfile
from io import BytesIO

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
_PARTS = re.compile(r"^word/(document|header\d*|footer\d*|footnotes|endnotes)\.xml$")
_WRAPPERS = re.compile(rb"<(?:\w+:)?(?:ins|del|moveTo|moveFrom|sdt|fldSimple|smartTag|customXml|txbxContent)[\s>/]")
_DROPPED = (f"{{{W}}}del", f"{{{W}}}moveFrom")
_UNWRAPPED = (f"{{{W}}}ins", f"{{{W}}}moveTo", f"{{{W}}}fldSimple", f"{{{W}}}smartTag", f"{{{W}}}customXml")
_BLOCKS = (f"{{{W}}}p", f"{{{W}}}tbl")


def unwrapped_docx(data: bytes) -> bytes:
    """`data` with the wrapped text of its document, header, footer and note parts moved where
    python-docx reads it, and each footnote's and endnote's paragraphs after the paragraph that
    refers to it; `data` itself when there is nothing to move."""
    with zipfile.ZipFile(BytesIO(data)) as archive:
        names = set(archive.namelist())
        changed = {}
        for name in sorted(names):
            if _PARTS.match(name):
                xml = archive.read(name)
                if _WRAPPERS.search(xml):
                    changed[name] = _unwrapped_part(xml)
        notes = {kind: changed.get(f"word/{kind}s.xml") or archive.read(f"word/{kind}s.xml")
                 for kind in ("footnote", "endnote") if f"word/{kind}s.xml" in names}
        if notes and "word/document.xml" in names:
            document = changed.get("word/document.xml") or archive.read("word/document.xml")
            with_notes = _notes_after_their_references(document, notes)
            if with_notes is not None:
                changed["word/document.xml"] = with_notes
        if not changed:
            return data
        out = BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as rewritten:
            for info in archive.infolist():
                rewritten.writestr(info, changed.get(info.filename) or archive.read(info.filename))
    return out.getvalue()


def _unwrapped_part(xml: bytes) -> bytes:
    from lxml import etree

    parser = etree.XMLParser(remove_blank_text=True, resolve_entities=False, no_network=True)  # python-docx's own settings
    root = etree.fromstring(xml, parser)
    _text_boxes_after_their_paragraphs(root)
    for element in list(root.iter(*_DROPPED)):
        element.getparent().remove(element)
    for element in list(root.iter(*_UNWRAPPED)):
        _replace_by_children(element, list(element))
    for sdt in list(root.iter(f"{{{W}}}sdt")):
        content = sdt.find(f"{{{W}}}sdtContent")
        _replace_by_children(sdt, list(content) if content is not None else [])
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)


def _replace_by_children(element, children: list) -> None:  # noqa: ANN001 -- lxml elements
    parent = element.getparent()
    if parent is None:
        return
    at = parent.index(element)
    for offset, child in enumerate(children):
        parent.insert(at + offset, child)
    parent.remove(element)


def _text_boxes_after_their_paragraphs(root) -> None:  # noqa: ANN001 -- an lxml element
    """Each outermost text box's paragraphs and tables, copied after the paragraph that anchors
    it (in order of the boxes); a box inside markup compatibility's fallback is the same box
    again for readers without DrawingML, so it is skipped."""
    last: dict = {}  # anchoring paragraph -> the block copied after it last
    for box in list(root.iter(f"{{{W}}}txbxContent")):
        if any(a.tag == f"{{{MC}}}Fallback" or a.tag == f"{{{W}}}txbxContent" for a in box.iterancestors()):
            continue
        host = next((a for a in box.iterancestors(f"{{{W}}}p")), None)
        if host is None or host.getparent() is None:
            continue
        _copied_after(host, [child for child in box if child.tag in _BLOCKS], last)


def _notes_after_their_references(document: bytes, notes: dict[str, bytes]) -> bytes | None:
    """word/document.xml with a copy of each referenced footnote's and endnote's paragraphs after
    the paragraph holding its reference (python-docx reads no note); None when none is
    referenced. The separator "notes" Word keeps in those parts have no reference."""
    from lxml import etree

    if b"footnoteReference" not in document and b"endnoteReference" not in document:
        return None
    parser = etree.XMLParser(remove_blank_text=True, resolve_entities=False, no_network=True)
    root = etree.fromstring(document, parser)
    by_id: dict[tuple[str, str], list] = {}
    for kind, xml in notes.items():
        for note in etree.fromstring(xml, parser).iter(f"{{{W}}}{kind}"):
            by_id[(kind, note.get(f"{{{W}}}id", ""))] = [child for child in note if child.tag in _BLOCKS]
    last: dict = {}  # referring paragraph -> the block copied after it last
    moved = False
    for reference in list(root.iter(f"{{{W}}}footnoteReference", f"{{{W}}}endnoteReference")):
        kind = "footnote" if reference.tag.endswith("footnoteReference") else "endnote"
        blocks = by_id.get((kind, reference.get(f"{{{W}}}id", "")), [])
        host = next((a for a in reference.iterancestors(f"{{{W}}}p")), None)
        if not blocks or host is None or host.getparent() is None:
            continue
        _copied_after(host, blocks, last)
        moved = True
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True) if moved else None


def _copied_after(host, blocks: list, last: dict) -> None:  # noqa: ANN001 -- lxml elements
    """Copies of `blocks` after `host`, or after what an earlier call copied after it (`last`),
    so boxes and notes keep their order."""
    anchor = last.get(host, host)
    for block in blocks:
        duplicate = copy.deepcopy(block)
        anchor.addnext(duplicate)
        anchor = duplicate
    last[host] = anchor
