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
So the document and its headers and footers are rewritten first, each parsed once, as Word
shows them with every change accepted: insertions and wrappers are replaced by what they hold,
deletions (`w:del`, `w:moveFrom`) are dropped, a text box's paragraphs follow the paragraph
that anchors it (its VML fallback copy, kept for old readers, is skipped), and a note's
paragraphs (unwrapped the same way) follow the paragraph that refers to it, and a drop cap's
letter starts the paragraph it begins, and equations are written out as linear text
(docx_math.py), SmartArt and charts as list items and tables (docx_graphics.py). Superscript digits are marked on the way (superscript_runs.py). A file holding none of these is passed on byte for
byte.
"""

from __future__ import annotations

import copy
import re
import zipfile
from io import BytesIO

from lxml import etree

from rag_pipeline.parsing.office.archive_parts import dangling_relationships_dropped, with_parts
from rag_pipeline.parsing.office.docx_alt_chunks import ALT_CHUNK, alt_chunks_inlined
from rag_pipeline.parsing.office.docx_graphics import GRAPHICS, graphics_written_out
from rag_pipeline.parsing.office.docx_math import MATH, math_as_text
from rag_pipeline.parsing.office.superscript_runs import WORD_SUPERSCRIPT, word_marked

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
_PARTS = re.compile(r"^word/(document|header\d*|footer\d*)\.xml$")  # what python-docx reads (notes: _notes)
_WRAPPERS = re.compile(rb"<(?:\w+:)?(?:ins|del|moveTo|moveFrom|sdt|fldSimple|smartTag|customXml|txbxContent)[\s>/]")
_DROPPED = (f"{{{W}}}del", f"{{{W}}}moveFrom")
_UNWRAPPED = (f"{{{W}}}ins", f"{{{W}}}moveTo", f"{{{W}}}fldSimple", f"{{{W}}}smartTag", f"{{{W}}}customXml")
_BLOCKS = (f"{{{W}}}p", f"{{{W}}}tbl")
_REFERENCES = re.compile(rb"<(?:\w+:)?(?:footnoteReference|endnoteReference)[\s>/]")
_DROP_CAP = re.compile(rb":dropCap=\"(?:drop|margin)\"")
_HIDDEN = re.compile(rb"<(?:\w+:)?(?:vanish|specVanish)[\s>/]|:sz \w+:val=\"[01]\"|:color \w+:val=\"[Ff]{6}\"")
_OFF = ("0", "false", "off")


def read_as_shown(data: bytes) -> tuple[bytes, int, int]:
    """`data` with the wrapped text of its document, header and footer parts moved where
    python-docx reads it, each footnote's and endnote's paragraphs after the paragraph that
    refers to it, alternative-format chunks read in (docx_alt_chunks.py) and the text Word does
    not show taken out (`_hidden_runs_removed`); `data` itself when there is nothing to change.
    Also: the characters of hidden text taken out, and the chunks that could not be read."""
    with zipfile.ZipFile(BytesIO(data)) as archive:
        names = set(archive.namelist())
        changed, unread = dangling_relationships_dropped(archive)
        hidden = 0
        for name in sorted(names):
            if _PARTS.match(name):
                xml = archive.read(name)
                if ALT_CHUNK.search(xml) or GRAPHICS.search(xml):
                    root = _parsed(xml)
                    inlined, unread_here = alt_chunks_inlined(root, archive, name)
                    inlined |= graphics_written_out(root, archive, name)
                    unread += unread_here
                    if inlined or unread_here:
                        xml = changed[name] = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
                notes = _notes(archive, names) if name == "word/document.xml" and _REFERENCES.search(xml) else {}
                rewritten, removed = _rewritten(xml, notes)
                hidden += removed
                if rewritten is not None:
                    changed[name] = rewritten
        return (with_parts(archive, changed) if changed else data), hidden, unread


def _parsed(xml: bytes):  # noqa: ANN202 -- an lxml element
    from lxml import etree

    parser = etree.XMLParser(remove_blank_text=True, resolve_entities=False, no_network=True)  # python-docx's own settings
    return etree.fromstring(xml, parser)


def _rewritten(xml: bytes, notes: dict[tuple[str, str], list]) -> tuple[bytes | None, int]:
    """The part with its notes copied in, its wrappers unwrapped and its hidden runs taken out
    (None when nothing applies), and the characters of those runs."""
    from lxml import etree

    wrapped = _WRAPPERS.search(xml) is not None
    raised = WORD_SUPERSCRIPT.search(xml) is not None
    capped = _DROP_CAP.search(xml) is not None
    unseen = _HIDDEN.search(xml) is not None
    maths = MATH.search(xml) is not None
    if not (wrapped or notes or raised or capped or unseen or maths):
        return None, 0
    root = _parsed(xml)
    moved = _notes_after_their_references(root, notes)
    written = maths and math_as_text(root)
    if wrapped:
        _unwrap(root)
    removed = _hidden_runs_removed(root) if unseen else 0
    joined = capped and _drop_caps_into_their_paragraphs(root)
    if not (wrapped | moved | joined | written | bool(removed) | (raised and word_marked(root))):
        return None, 0
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True), removed


def _unwrap(root) -> None:  # noqa: ANN001 -- an lxml element
    """Text boxes copied out, deletions dropped, every other wrapper replaced by what it holds."""
    _text_boxes_after_their_paragraphs(root)
    for element in list(root.iter(*_DROPPED)):
        element.getparent().remove(element)
    for element in list(root.iter(*_UNWRAPPED)):
        _replace_by_children(element, list(element))
    for sdt in list(root.iter(f"{{{W}}}sdt")):
        content = sdt.find(f"{{{W}}}sdtContent")
        _replace_by_children(sdt, list(content) if content is not None else [])


def _hidden_runs_removed(root) -> int:  # noqa: ANN001 -- an lxml element
    """Runs Word does not show, taken out; the characters they held. Hidden text (`w:vanish`,
    not printed or shown unless the reader asks), text under one point (`w:sz` of 0 or 1
    half-points) and white text on an unshaded paragraph of the default style outside tables in a
    document without a page colour (in a table or a styled paragraph, a style may shade it: such
    text is kept). A model would
    read what a reviewer never sees, as with the invisible characters cleaning removes."""
    coloured_page = root.find(f"{{{W}}}background") is not None
    removed = 0
    for run in list(root.iter(f"{{{W}}}r")):
        props = run.find(f"{{{W}}}rPr")
        if props is None or not _unseen(run, props, coloured_page):
            continue
        removed += sum(len(t.text or "") for t in run.iter(f"{{{W}}}t"))
        run.getparent().remove(run)
    return removed


def _unseen(run, props, coloured_page: bool) -> bool:  # noqa: ANN001 -- lxml elements
    for tag in ("vanish", "specVanish"):
        flag = props.find(f"{{{W}}}{tag}")
        if flag is not None and flag.get(f"{{{W}}}val", "1").lower() not in _OFF:
            return True
    size = props.find(f"{{{W}}}sz")
    if size is not None and size.get(f"{{{W}}}val") in ("0", "1"):
        return True
    colour = props.find(f"{{{W}}}color")
    if colour is None or (colour.get(f"{{{W}}}val") or "").upper() != "FFFFFF" or coloured_page:
        return False
    highlight = props.find(f"{{{W}}}highlight")
    if _shaded(props.find(f"{{{W}}}shd")) or (highlight is not None and highlight.get(f"{{{W}}}val") != "none"):
        return False
    paragraph = run.getparent()
    while paragraph is not None and paragraph.tag != f"{{{W}}}p":
        paragraph = paragraph.getparent()
    if paragraph is None or _shaded(paragraph.find(f"{{{W}}}pPr/{{{W}}}shd")):
        return False
    style = paragraph.find(f"{{{W}}}pPr/{{{W}}}pStyle")
    if style is not None and (style.get(f"{{{W}}}val") or "Normal") != "Normal":
        return False  # a paragraph style may shade it (a template's banner heading): not read here
    return not any(ancestor.tag == f"{{{W}}}tbl" for ancestor in paragraph.iterancestors())


def _shaded(shading) -> bool:  # noqa: ANN001 -- an lxml element or None
    """Whether a `w:shd` gives a fill other than none, automatic or white."""
    return shading is not None and (shading.get(f"{{{W}}}fill") or "auto").upper() not in ("AUTO", "FFFFFF")


def _drop_caps_into_their_paragraphs(root) -> bool:  # noqa: ANN001 -- an lxml element
    """A drop cap is a paragraph of its own in a frame (`w:framePr w:dropCap="drop"`) holding the
    first letter of the next paragraph: read apart, the index held a paragraph "T" and a broken
    word "he company ...". Its runs are moved to the start of that paragraph, as Word shows it."""
    joined = False
    for frame in list(root.iter(f"{{{W}}}framePr")):
        if frame.get(f"{{{W}}}dropCap") not in ("drop", "margin"):
            continue
        cap = frame.getparent().getparent()  # framePr -> pPr -> p
        following = cap.getnext()
        if cap.tag != f"{{{W}}}p" or following is None or following.tag != f"{{{W}}}p":
            continue
        runs = [child for child in cap if child.tag != f"{{{W}}}pPr"]
        start = 1 if len(following) and following[0].tag == f"{{{W}}}pPr" else 0
        for offset, run in enumerate(runs):
            following.insert(start + offset, run)
        cap.getparent().remove(cap)
        joined = True
    return joined


def _notes(archive: zipfile.ZipFile, names: set[str]) -> dict[tuple[str, str], list]:
    """(kind, id) -> the paragraphs and tables of each footnote and endnote, unwrapped."""
    notes: dict[tuple[str, str], list] = {}
    for kind in ("footnote", "endnote"):
        if f"word/{kind}s.xml" not in names:
            continue
        xml = archive.read(f"word/{kind}s.xml")
        root = _parsed(xml)
        if _WRAPPERS.search(xml):
            _unwrap(root)
        if WORD_SUPERSCRIPT.search(xml):
            word_marked(root)
        for note in root.iter(f"{{{W}}}{kind}"):
            notes[(kind, note.get(f"{{{W}}}id", ""))] = [child for child in note if child.tag in _BLOCKS]
    return notes


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


def _notes_after_their_references(root, notes: dict[tuple[str, str], list]) -> bool:  # noqa: ANN001
    """A copy of each referenced note's paragraphs after the paragraph holding its reference;
    whether any was copied. The separator "notes" Word keeps in the note parts have no
    reference."""
    last: dict = {}  # referring paragraph -> the block copied after it last
    moved = False
    for reference in list(root.iter(f"{{{W}}}footnoteReference", f"{{{W}}}endnoteReference")) if notes else []:
        kind = "footnote" if reference.tag.endswith("footnoteReference") else "endnote"
        blocks = notes.get((kind, reference.get(f"{{{W}}}id", "")), [])
        host = next((a for a in reference.iterancestors(f"{{{W}}}p")), None)
        if not blocks or host is None or host.getparent() is None:
            continue
        _copied_after(host, blocks, last)
        moved = True
    return moved


def _copied_after(host, blocks: list, last: dict) -> None:  # noqa: ANN001 -- lxml elements
    """Copies of `blocks` after `host`, or after what an earlier call copied after it (`last`),
    so boxes and notes keep their order."""
    anchor = last.get(host, host)
    for block in blocks:
        duplicate = copy.deepcopy(block)
        anchor.addnext(duplicate)
        anchor = duplicate
    last[host] = anchor
