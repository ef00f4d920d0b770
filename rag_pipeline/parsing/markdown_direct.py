"""Markdown without the heavy stack (issue 28, item 4).

Parsing Markdown through `unstructured` meant importing it (30+ s on a busy machine: NLP
models, every partitioner's dependencies) to run two light steps: python-markdown renders the
text to HTML (extensions "tables" and "fenced_code"), and unstructured's v1 HTML parser walks
that HTML with lxml. This module runs the same two steps itself: the same python-markdown call
on the same pre-processed text, the same lxml parser settings, and a walk that follows the v1
parser's rules (unstructured/partition/html/parser.py, 0.27) for what the project keeps of its
output: which text becomes one element, headings by <h1>..<h6>, list items, code blocks, tables
(through the same `table_elements` as the unstructured path). Element types that the mapping
(office/elements.py) folds together (NarrativeText, Text, Address, EmailAddress) are not told
apart, and annotations (bold, links) are not computed: nothing downstream reads them.

The result is checked equal to the unstructured path on every Markdown file of the shared
corpus and on generated and hostile files (rag_pipeline_tests/parsing/test_markdown_direct.py).
Where the walk would need what it does not implement, it answers None and the caller uses the
unstructured path, so the answer is the former one:
- MathML (<math>) and KaTeX markup: read there as in an HTML file (office/html_tree's
  math_and_ruby_as_read: MathML in its linear form, KaTeX by its TeX annotation);
- HTML nested deeper than MAX_DEPTH (the walk recurses, as unstructured's does).
Where the answers differ, on purpose:
- HTML nested deeper than LXML_DEPTH (raw <div>s 256 levels deep): lxml's default parser
  silently drops everything from that depth to the end of the file, so the former path indexed
  a truncated document, or refused it as "no text found". Such a file now goes to the
  unstructured path with its HTML as shown, the deep part flattened as for an HTML file
  (office/html_tree.flatten_deep_nesting), so the whole text is read. Lists indented that deep
  are refused before python-markdown reads them, with what to fix (markdown_source.py).
- Raw <details> (a README's "click to expand") and <figure>: the former path dropped them with
  everything inside; the direct parser reads what they hold, the <summary> or <figcaption> as
  a paragraph (office/html_tree.open_figures_and_details, as for HTML files). The fallback to
  the unstructured path (MathML, deep nesting) gets its HTML as an e-mail's HTML part does
  (office/html_content.html_as_shown): figures and details opened, MathML read.
- Raw HTML a reader is not shown (display:none, the hidden attribute, font size 0): the former
  path indexed it; both paths now leave it out, as for HTML files (office/html_chrome.drop_hidden).
- A file of only HTML comments: the former path failed with "AttributeError: 'NoneType' object
  has no attribute 'xpath'"; the direct parser finds no elements, so the file is refused as
  "no text found in this Markdown file".
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from types import SimpleNamespace

from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.markdown_blocks import linear_markdown
from rag_pipeline.parsing.markdown_dialects import as_paragraph, as_site_shows
from rag_pipeline.parsing.markdown_front_matter import split_front_matter
from rag_pipeline.parsing.markdown_source import (
    TOO_DEEP,
    check_source_nesting,
    markdown_inside_details,
)
from rag_pipeline.parsing.superscripts import mark_sup_elements
from rag_pipeline.parsing.types import Element, ParsedDocument, ParseError

MAX_DEPTH = 120  # HTML nesting the walk follows; deeper trees go to the unstructured path
_STRIPPED = ["del", "link", "meta", "noscript", "script", "style"]  # partition_html strips these first

# unstructured/partition/html/parser.py's element-class registry, by the behaviour the walk needs
_FLOW = {"address", "article", "aside", "blockquote", "body", "center", "div", "footer", "header", "hgroup",
         "main", "section", "dl", "ol", "ul"}
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_BLOCK_ITEMS = {"p", "dt"}
_LIST_ITEMS = {"li", "dd"}
_REMOVED_BLOCKS = {"details", "figure", "hr", "nav", "template", "form", "input", "summary"}
_REMOVED_PHRASING = {"button", "label", "audio", "canvas", "datalist", "dialog", "head", "iframe", "ix:header",
                     "noembed", "noframes", "object", "select", "svg", "textarea", "title", "video", "xml"}
_BLOCKS = _FLOW | _HEADINGS | _BLOCK_ITEMS | _LIST_ITEMS | _REMOVED_BLOCKS | {"pre", "img", "table"}
_UNSUPPORTED = {"math"}

# unstructured.nlp.patterns.UNICODE_BULLETS_RE (a test holds the copy to the original): a
# paragraph starting with a bullet is a list item, with the bullet removed.
_BULLETS = ["\x95", "\u2022", "\u2023", "\u2043", "\u3164", "\u204c", "\u204d", "\u2219", "\u25cb", "\u25cf",
            "\u25d8", "\u25e6", "\u2619", "\u2765", "\u2767", "\u29be", "\u29bf", "-", "\u2013", "\uf0b7", r"\*",
            "\x95", "\xb7"]
_UNAMBIGUOUS = "|".join(b for b in _BULLETS if b not in ("-", "\u2013"))
BULLETS_RE = re.compile(f"(?:(?:{_UNAMBIGUOUS})|(?:(?:(?<=\\n)|\\A)(?:-|\u2013)(?=\\s|$)))(?!{'|'.join(_BULLETS)})")


@dataclass
class _Raw:
    """One element as the v1 parser yields it: `category` in Title, ListItem, CodeSnippet,
    Table, Text (any text type), Image."""

    category: str
    text: str
    depth: int | None = None
    html: str | None = None


class Unsupported(Exception):
    """The markup needs what the walk does not implement: use the unstructured path."""


def parse_markdown_file(data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
    """A Markdown file as the unstructured path parses it (strict UTF-8, GitHub table rows
    repaired), without importing unstructured unless the direct walk defers to it."""
    from rag_pipeline.parsing.office.markdown_tables import normalize_markdown
    from rag_pipeline.parsing.office.text import decode_text_strict
    from rag_pipeline.parsing.office.version import PARSER_VERSION

    decoded = decode_text_strict(data, "Markdown")
    front = split_front_matter(decoded)
    text = decoded
    if front is not None:  # site metadata: its title is the document's, its other keys not text
        text = "\n\n".join([*(as_paragraph(p) for p in front.prose), front.body])
    text = as_site_shows(text)  # admonitions, alerts, directives, roles, footnotes (markdown_dialects.py)
    if not text.strip():
        return ParsedDocument(elements=[], parser=PARSER_VERSION, title=front.title if front else None)
    elements = parse_markdown_direct(normalize_markdown(text))
    if elements is None:
        from rag_pipeline.parsing.office import parse_with_unstructured

        source = data if text == decoded else text.encode("utf-8")
        parsed = parse_with_unstructured(source, name=name, kind="markdown", limits=limits)
        return replace(parsed, title=front.title) if front and front.title else parsed
    return ParsedDocument(elements=elements, parser=PARSER_VERSION, title=front.title if front else None)


def parse_markdown_direct(text: str) -> list[Element] | None:
    """The elements of Markdown `text` (already decoded, tables normalised) as the unstructured
    path maps them; None when only that path can say (see the module docstring)."""
    from lxml import etree

    from rag_pipeline.parsing.office.html_chrome import drop_hidden
    from rag_pipeline.parsing.office.html_tree import open_figures_and_details
    from rag_pipeline.parsing.office.tables import tables_as_read

    check_source_nesting(text)
    source, extensions = markdown_inside_details(text)
    try:
        html_text = linear_markdown(extensions).convert(source)
    except RecursionError:
        raise ParseError(TOO_DEEP) from None
    if not html_text or not html_text.strip():
        return []
    if "katex" in html_text or "<math" in html_text.lower():
        return None
    parser = etree.HTMLParser(remove_comments=True, remove_pis=True, huge_tree=True)
    try:
        root = etree.fromstring(html_text, parser)
    except ValueError:
        root = etree.fromstring(html_text.encode("utf-8"), parser)
    if root is None:  # only comments or processing instructions: no text (the former path crashed here)
        return []
    etree.strip_elements(root, _STRIPPED, with_tail=False)
    drop_hidden(root)  # raw HTML a reader is not shown (display:none, hidden, font size 0), as in an HTML file
    mark_sup_elements(root)  # raw <sup> in the Markdown: "10<sup>6</sup>" is 10^6, not 106
    open_figures_and_details(root)  # raw <details> and <figure>: unstructured dropped what they hold
    tables_as_read(root)  # raw HTML tables: the walk, as unstructured, drops spans and flattens layout tables
    main = root.find(".//main")
    if main is None:
        main = root.find(".//body")
    if main is None:
        main = root
    try:
        _check(main)
        raw = list(_Walk().flow(main))
    except (Unsupported, RecursionError):
        return None
    return _mapped(raw)


def _check(root) -> None:  # noqa: ANN001 -- an lxml element
    """Refuse what the walk does not implement, and trees deeper than MAX_DEPTH (the unstructured
    path reads them, its HTML flattened where deeper than unstructured reads)."""
    stack, deepest = [(root, 0)], 0
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        for child in node:
            if not isinstance(child.tag, str) or child.tag in _UNSUPPORTED:
                raise Unsupported(str(child.tag))
            stack.append((child, depth + 1))
    if deepest > MAX_DEPTH:
        raise Unsupported("nesting")


def _mapped(raw: list[_Raw]) -> list[Element]:
    """office/elements.map_markup_element over the raw elements."""
    from rag_pipeline.parsing.office.elements import table_elements

    out: list[Element] = []
    for item in raw:
        text = item.text.strip()
        if item.category == "Image" or (not text and item.category != "Table"):
            continue
        if item.category == "Title":
            out.append(Element(kind="heading", text=text, level=max(1, min(6, (item.depth or 0) + 1))))
        elif item.category == "Table":
            out.extend(table_elements(SimpleNamespace(text=item.text, metadata=SimpleNamespace(text_as_html=item.html))))
        elif item.category == "ListItem":
            out.append(Element(kind="list_item", text=text))
        elif item.category == "CodeSnippet":
            out.append(Element(kind="code", text=item.text.strip("\n")))
        else:
            out.append(Element(kind="paragraph", text=text))
    return out


def _is_phrasing(node) -> bool:  # noqa: ANN001
    return node.tag not in _BLOCKS


class _Walk:
    """The v1 parser's traversal: a block's text and the phrasing after it form one element;
    every block child is its own element(s); the text after a block child starts another."""

    def flow(self, node, category: str | None = None) -> Iterator[_Raw]:  # noqa: ANN001
        """Flow.iter_elements (and its subclasses', by tag)."""
        tag = node.tag
        if tag in _REMOVED_BLOCKS:
            return
        if tag == "img":
            if (node.get("data-src", "").strip() or node.get("src", "").strip()):
                yield _Raw("Image", node.get("alt", "").strip())
            return
        if tag == "table":
            yield from self.table(node)
            return
        if tag in _HEADINGS:
            category = "Title"
        elif tag in _LIST_ITEMS:
            category = "ListItem"
            only = node[0] if len(node) == 1 else None
            if (only is not None and not (node.text or "").strip() and only.tag in _FLOW - {"dl", "ol", "ul"} | _BLOCK_ITEMS
                    and not (only.tail or "").strip() and all(_is_phrasing(d) for d in only.iterdescendants())):
                yield from self.paragraph(node, only.text or "", list(only), "ListItem")
                return
        elif tag == "pre":
            category = "CodeSnippet"
        queue = list(node)
        queue.reverse()  # popped from the end: document order
        yield from self.paragraph(node, node.text or "", queue, category, consumed=True)
        while queue:
            block = queue.pop()
            yield from self.flow(block)
            yield from self.paragraph(node, block.tail or "", queue, None, consumed=True)

    def paragraph(self, owner, text: str, queue: list, category: str | None,  # noqa: ANN001
                  consumed: bool = False) -> Iterator[_Raw]:
        """_element_from_text_or_tail: `text` and the phrasing at the head of `queue` (popped)
        as zero or one element, elements of blocks nested in that phrasing in between."""
        if not consumed:
            queue = list(reversed(queue))
        segments = [text]
        while queue and _is_phrasing(queue[-1]):
            for part in self.phrasing(queue.pop()):
                if isinstance(part, str):
                    segments.append(part)
                else:
                    yield from self.flush(owner, segments, category)
                    segments = []
                    yield part
        yield from self.flush(owner, segments, category)

    def phrasing(self, node) -> Iterator[str | _Raw]:  # noqa: ANN001
        """Phrasing.iter_text_segments: text, children (blocks inside give elements), tail."""
        tag = node.tag
        if tag == "br":
            yield "\n"
        elif tag not in _REMOVED_PHRASING:
            if node.text:
                yield node.text
            for child in node:
                if _is_phrasing(child):
                    yield from self.phrasing(child)
                else:  # a block inside phrasing: its elements, then its tail joins the phrase
                    yield from self.flow(child)
                    if child.tail:
                        yield child.tail
        if node.tail:
            yield node.tail

    def flush(self, owner, segments: list[str], category: str | None) -> Iterator[_Raw]:  # noqa: ANN001
        """_ElementAccumulator.flush: nothing for whitespace; else one element, its type given
        by the block or, for plain blocks, by its text (bullet -> list item; 1 character -> none)."""
        joined = "".join(segments)
        if owner.tag == "pre":  # the accumulator of <pre> keeps whitespace, whatever the type
            text = joined[1 if joined.startswith("\n") else 0 : -1 if joined.endswith("\n") else len(joined)]
        else:
            text = " ".join(joined.split())
        if not segments or not text:
            return
        if category is None:
            if BULLETS_RE.match(text.strip()):
                text = BULLETS_RE.sub("", text, 1).strip()
                if not text:
                    return
                category = "ListItem"
            elif len(text) < 2:
                return
            else:
                category = "Text"
        depth = int(owner.tag[1]) - 1 if category == "Title" and owner.tag in _HEADINGS else 0
        yield _Raw(category, text, depth=depth if category == "Title" else None)

    def table(self, node) -> Iterator[_Raw]:  # noqa: ANN001
        """TableBlock.iter_elements: rows' cell texts, and the sanitised HTML the mapping reads."""
        import html

        parts, captions, rows = ["<table>"], [], []

        def cell(child) -> tuple[str, str]:  # noqa: ANN001
            text = " ".join(t for t in (s.strip() for s in child.itertext()) if t)
            body = " ".join("<br/>".join(html.escape(text).split("\n")).split())
            return text, f"<{child.tag}>{body}</{child.tag}>" if body else f"<{child.tag}/>"

        def row(tr) -> None:  # noqa: ANN001
            cells = [cell(c) for c in tr if c.tag in ("th", "td")]
            rows.append(" ".join(t for t, _ in cells if t))
            if cells:
                parts.extend(("<tr>", "".join(h for _, h in cells), "</tr>"))

        for child in node:
            if child.tag == "caption":
                text, markup = cell(child)
                if text:
                    captions.append(text)
                    parts.append(markup)
            elif child.tag == "tr":
                row(child)
            elif child.tag in ("thead", "tbody", "tfoot"):
                parts.append(f"<{child.tag}>")
                for tr in child:
                    if tr.tag == "tr":
                        row(tr)
                parts.append(f"</{child.tag}>")
        if " ".join(rows).strip() == "":
            return
        parts.append("</table>")
        yield _Raw("Table", " ".join(captions + rows).strip(), html="".join(parts))
