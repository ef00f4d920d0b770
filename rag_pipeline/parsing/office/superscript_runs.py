"""Superscript runs of Office files marked before the partitioners read them (the rule is
parsing/superscripts.py): Word's `w:vertAlign="superscript"` and PowerPoint's positive
`baseline` on a DrawingML run. python-docx and python-pptx join a paragraph's runs with nothing
between them, so "10" + superscript "6" read "106"."""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable
from io import BytesIO
from typing import Any

from rag_pipeline.parsing.office.archive_parts import with_parts
from rag_pipeline.parsing.superscripts import marked

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
WORD_SUPERSCRIPT = re.compile(rb"<(?:\w+:)?vertAlign\s+(?:\w+:)?val\s*=\s*[\"']superscript[\"']")
_RAISED_BASELINE = re.compile(rb"\sbaseline\s*=\s*[\"']\+?[1-9]")
_SLIDE_PARTS = re.compile(r"^ppt/(?:slides/slide|notesSlides/notesSlide)\d+\.xml$")


def word_marked(root: Any) -> bool:
    """Each superscript run of a Word part that starts with a digit right after a letter or digit
    of its paragraph marked; whether any was."""
    return _marked(root, f"{{{W}}}p", f"{{{W}}}r", f"{{{W}}}t", _word_superscript)


def pptx_marked(data: bytes) -> bytes:
    """`data` with the superscript runs of its slides and notes marked; `data` itself when no
    slide raises a run. Each part is parsed once."""
    from lxml import etree

    with zipfile.ZipFile(BytesIO(data)) as archive:
        changed = {}
        for name in archive.namelist():
            if not _SLIDE_PARTS.match(name):
                continue
            xml = archive.read(name)
            if _RAISED_BASELINE.search(xml) is None:
                continue
            parser = etree.XMLParser(resolve_entities=False, no_network=True)
            root = etree.fromstring(xml, parser)
            if _marked(root, f"{{{A}}}p", f"{{{A}}}r", f"{{{A}}}t", _drawing_superscript):
                changed[name] = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
        return with_parts(archive, changed) if changed else data


def _marked(root: Any, paragraph_tag: str, run_tag: str, text_tag: str, raised: Callable[[Any], bool]) -> bool:
    changed = False
    for paragraph in root.iter(paragraph_tag):
        before, was_raised = "", False
        for run in paragraph.iter(run_tag):
            if next(run.iterancestors(paragraph_tag), None) is not paragraph:
                continue  # a run of a paragraph inside this one (a text box): read as its own paragraph
            texts = list(run.iter(text_tag))
            text = "".join(t.text or "" for t in texts)
            if not text:
                continue
            superscript = raised(run)
            # an editor splits one superscript over several runs at will: only the first is marked
            if superscript and not was_raised and (shown := marked(before, text)) != text:
                texts[0].text = shown[: len(shown) - len(text)] + (texts[0].text or "")
                changed = True
            before, was_raised = text[-1:], superscript
    return changed


def _word_superscript(run: Any) -> bool:
    align = run.find(f"{{{W}}}rPr/{{{W}}}vertAlign")
    return align is not None and align.get(f"{{{W}}}val") == "superscript"


def _drawing_superscript(run: Any) -> bool:
    properties = run.find(f"{{{A}}}rPr")
    baseline = properties.get("baseline") if properties is not None else None
    try:
        return baseline is not None and int(baseline.lstrip("+")) > 0
    except ValueError:
        return False
