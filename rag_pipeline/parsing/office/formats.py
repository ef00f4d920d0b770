"""One parse function per format: partition with `unstructured`, then map to `Element`s.

The partitioners are imported inside each function: importing `unstructured` is slow and
pulls in heavy dependencies, and only the formats actually seen should pay for it. `limits` is
part of every parser's signature; size and archive limits are enforced by the dispatcher."""

from __future__ import annotations

from collections.abc import Callable
from io import BytesIO
from typing import Any

from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.markdown_blocks import linear_markdown
from rag_pipeline.parsing.office.document_meta import core_title, html_bold_texts, html_title
from rag_pipeline.parsing.office.elements import map_docx_element, map_markup_elements
from rag_pipeline.parsing.office.html_content import extract_main_content, html_as_shown
from rag_pipeline.parsing.office.html_tree import MAX_NESTING
from rag_pipeline.parsing.office.markdown_tables import normalize_markdown
from rag_pipeline.parsing.office.slides import SlideHints, map_slide, pptx_as_shown
from rag_pipeline.parsing.office.text import decode_html, decode_text_strict, normalize_whitespace
from rag_pipeline.parsing.office.version import PARSER_VERSION
from rag_pipeline.parsing.types import Element, ParsedDocument


def _parse_docx(data: bytes, limits: ParseLimits) -> ParsedDocument:
    """DOCX pages are a rendering artefact (Word reflows them), so elements carry no page. Text in
    tracked insertions, content controls, fields and text boxes is moved where python-docx reads
    it first (docx_wrappers.py)."""
    from unstructured.partition.docx import partition_docx

    from rag_pipeline.parsing.office.docx_wrappers import read_as_shown

    shown, hidden, unread = read_as_shown(data)
    raw = partition_docx(file=BytesIO(shown), include_page_breaks=False, infer_table_structure=True, languages=[""])
    elements = [el for item in raw for el in map_docx_element(item)]
    warnings = [f"{hidden:,} characters of text Word does not show (hidden, under 1 pt or white on white) were left "
                "out; if readers should see them, unhide them in the file"] if hidden else []
    if unread:
        warnings.append(f"{unread:,} embedded chunk(s) in RTF or part(s) missing from the package could not be read and "
                        "were left out; "
                        "open the file in Word and save it again to make them ordinary text")
    return ParsedDocument(elements=elements, parser=PARSER_VERSION, title=core_title(data), warnings=warnings)


def _parse_pptx(data: bytes, limits: ParseLimits) -> ParsedDocument:
    """Slides are the pages of a deck: every element carries its slide number. A slide's speaker
    notes are read after its shapes, on the same page (they often hold what the slide only
    hints at; unstructured leaves them out unless asked)."""
    from unstructured.partition.pptx import partition_pptx

    from rag_pipeline.parsing.office.superscript_runs import pptx_marked

    shown, hidden, hints = pptx_as_shown(data)
    raw = partition_pptx(
        file=BytesIO(pptx_marked(shown)), include_page_breaks=False, infer_table_structure=True, include_slide_notes=True,
        languages=[""],
    )
    by_slide: dict[int, list[Any]] = {}
    for item in raw:
        by_slide.setdefault(item.metadata.page_number or 1, []).append(item)
    elements: list[Element] = []
    for slide_no in sorted(by_slide):
        slide_hints = hints[slide_no - 1] if 0 < slide_no <= len(hints) else SlideHints()
        elements.extend(map_slide(by_slide[slide_no], slide_no, slide_hints))
    warnings = [f"{hidden:,} characters of text PowerPoint does not show (hidden or off-slide shapes, 1 pt or less, or "
                "in the slide's background colour) were left out; if readers should see them, show them on the slide"
                ] if hidden else []
    return ParsedDocument(elements=elements, parser=PARSER_VERSION, page_count=len(hints) or None, title=core_title(data),
                          warnings=warnings)


def _parse_html(data: bytes, limits: ParseLimits) -> ParsedDocument:
    """Strip the site chrome first, then let unstructured partition what is left."""
    from unstructured.partition.html import partition_html

    page = decode_html(data)
    main_html, captions, flattened = extract_main_content(page)
    raw = partition_html(text=main_html, languages=[""])
    elements = map_markup_elements(raw)
    bold = html_bold_texts(main_html)
    for element in elements:
        if element.kind == "paragraph" and normalize_whitespace(element.text) in captions:
            element.kind = "caption"
        elif element.kind == "paragraph" and normalize_whitespace(element.text) in bold:
            element.bold = True
    warnings = [f"{flattened:,} elements nested more than {MAX_NESTING} levels deep were read as plain text (their "
                "structure is lost, their text kept); close the page's tags or flatten its nesting"] if flattened else []
    return ParsedDocument(elements=elements, parser=PARSER_VERSION, title=html_title(page), warnings=warnings)


def _parse_markdown(data: bytes, limits: ParseLimits) -> ParsedDocument:
    """Markdown goes through python-markdown (tables, fenced code) and the HTML partitioner, as
    unstructured's partition_md does it, with the HTML made what a reader is shown first (hidden
    elements out, MathML as read, figures and details opened), as for an e-mail's HTML part."""
    from unstructured.partition.html import partition_html

    text = decode_text_strict(data, "Markdown")
    if not text.strip():
        return ParsedDocument(elements=[], parser=PARSER_VERSION)
    html = linear_markdown(["tables", "fenced_code"]).convert(normalize_markdown(text))
    raw = partition_html(text=html_as_shown(html), languages=[""]) if html.strip() else []
    return ParsedDocument(elements=map_markup_elements(raw), parser=PARSER_VERSION)


def _parse_email(data: bytes, limits: ParseLimits) -> ParsedDocument:
    """The subject becomes the top heading (it is what people search for); body headings sit one
    level below it. Every inline text part is read, and every enclosed message under its own
    subject one level lower (email_parts.py: unstructured's partitioner read only the first
    body). File attachments are NOT parsed: they would bypass the type checks and limits that
    every file gets, so they must be ingested as files of their own."""
    import email
    import email.policy

    from unstructured.partition.html import partition_html

    from rag_pipeline.parsing.office.email_parts import readable_parts, subject_of
    from rag_pipeline.parsing.text_direct import guessed_text_elements

    message = email.message_from_bytes(data, policy=email.policy.default)
    elements: list[Element] = []
    subject = subject_of(message)
    if subject:
        elements.append(Element(kind="heading", text=subject, level=1))
    for part in readable_parts(message):
        level = min(part.depth, _MAX_ENCLOSED_LEVEL) + 1  # the subject heading of this part's message
        if part.kind == "message":
            elements.append(Element(kind="heading", text=part.text or "(enclosed message without a subject)",
                                    level=level))
            continue
        if part.kind == "text/html":
            raw = partition_html(text=html_as_shown(part.text), languages=[""])
            elements += map_markup_elements(raw, heading_offset=level)
        else:
            elements += guessed_text_elements(part.text, heading_offset=level)
    return ParsedDocument(elements=elements, parser=PARSER_VERSION)


_MAX_ENCLOSED_LEVEL = 3  # a message enclosed deeper keeps the headings of the third level


PARSERS: dict[str, Callable[[bytes, ParseLimits], ParsedDocument]] = {
    "docx": _parse_docx,
    "pptx": _parse_pptx,
    "html": _parse_html,
    "markdown": _parse_markdown,
    "email": _parse_email,
}
KINDS = tuple(PARSERS)
