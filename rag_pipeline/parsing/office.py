"""Non-PDF formats (DOCX, PPTX, HTML, Markdown, plain text, e-mail) via `unstructured`.

`unstructured` does the format work; this module only maps its element types onto the
project's `Element` kinds (see types.py), and fixes the few places where its raw output would
mislead the format-agnostic cleaner and chunker downstream:

* heading levels come from real structure only (DOCX heading styles, HTML h1..h6, Markdown #,
  PPTX title placeholders), never from "this line looks short" guesses, because a false heading
  splits chunks and puts a wrong breadcrumb on everything below it;
* tables become GitHub Markdown with a header row, so a table stays one readable chunk;
* HTML pages lose their navigation, sidebars, ads and footers before partitioning, so the index
  holds the page's content and not the site's chrome.
"""

from __future__ import annotations

import os

# `unstructured` pings a telemetry endpoint when imported and after every partition call (with
# document type and element counts). Company documents must not leak metadata, and offline the
# import-time ping can stall for its 10 s timeout. Opt out before anything imports it.
os.environ.setdefault("SCARF_NO_ANALYTICS", "true")
os.environ.setdefault("DO_NOT_TRACK", "true")
os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")

import contextvars  # noqa: E402
import functools  # noqa: E402
import importlib.metadata  # noqa: E402
import re  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from io import BytesIO  # noqa: E402
from typing import Any, Callable, Iterable, Sequence  # noqa: E402

from lxml import etree  # noqa: E402
from lxml import html as lxml_html  # noqa: E402

from rag_pipeline.parsing.detect import KIND_LABELS  # noqa: E402
from rag_pipeline.parsing.types import Element, ParsedDocument, ParseError, ParseLimits  # noqa: E402

UNSTRUCTURED_VERSION = importlib.metadata.version("unstructured")
# Bump "+mapN" whenever the mapping below changes what a document parses to: the version is
# stored with each parsed document so a mapping change triggers a re-parse.
PARSER_VERSION = f"unstructured-{UNSTRUCTURED_VERSION}+map1"

KINDS = ("docx", "pptx", "html", "markdown", "text", "email")
UTF8_BOM = b"\xef\xbb\xbf"


# ------------------------------------------------------------------------------------------------
# Entry point
# ------------------------------------------------------------------------------------------------


def parse_with_unstructured(
    data: bytes, *, name: str, kind: str, limits: ParseLimits
) -> ParsedDocument:
    """Parse one non-PDF file. `kind` comes from `detect.detect_kind`, which has already checked
    that the bytes really are that format; archive-bomb and size limits are the dispatcher's job.

    Any library failure becomes a `ParseError` naming the format, because the message is shown
    to operators and a library traceback tells them nothing about what to fix."""
    if kind not in _PARSERS:
        raise ValueError(f"no unstructured parser for kind {kind!r}; expected one of {KINDS}")
    _install_heuristic_shortcuts()
    token = _FAST_HEURISTICS.set(True)
    try:
        return _PARSERS[kind](data, limits)
    except ParseError:
        raise
    except Exception as exc:  # noqa: BLE001 -- every library failure must become a ParseError
        raise ParseError(f"could not read this {KIND_LABELS[kind]} file: {short_reason(exc)}") from exc
    finally:
        _FAST_HEURISTICS.reset(token)


def short_reason(exc: BaseException, limit: int = 200) -> str:
    """One line describing `exc` for an operator: the exception type plus its first line."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    reason = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return reason if len(reason) <= limit else reason[: limit - 3] + "..."


# ------------------------------------------------------------------------------------------------
# Per-format parsers
# ------------------------------------------------------------------------------------------------


def _parse_docx(data: bytes, limits: ParseLimits) -> ParsedDocument:
    """DOCX pages are a rendering artefact (Word reflows them), so elements carry no page."""
    raw = _partition_docx(data)
    elements = [el for item in raw for el in _map_docx_element(item)]
    return ParsedDocument(elements=elements, parser=PARSER_VERSION)


def _parse_pptx(data: bytes, limits: ParseLimits) -> ParsedDocument:
    """Slides are the pages of a deck: every element carries its slide number."""
    from unstructured.partition.pptx import partition_pptx

    hints = _pptx_slide_hints(data)
    raw = partition_pptx(
        file=BytesIO(data), include_page_breaks=False, infer_table_structure=True, languages=[""]
    )
    by_slide: dict[int, list[Any]] = {}
    for item in raw:
        by_slide.setdefault(item.metadata.page_number or 1, []).append(item)
    elements: list[Element] = []
    for slide_no in sorted(by_slide):
        slide_hints = hints[slide_no - 1] if 0 < slide_no <= len(hints) else _SlideHints()
        elements.extend(_map_slide(by_slide[slide_no], slide_no, slide_hints))
    return ParsedDocument(elements=elements, parser=PARSER_VERSION, page_count=len(hints) or None)


def _parse_html(data: bytes, limits: ParseLimits) -> ParsedDocument:
    """Strip the site chrome first, then let unstructured partition what is left."""
    from unstructured.partition.html import partition_html

    main_html, captions = extract_main_content(decode_html(data))
    raw = partition_html(text=main_html, languages=[""])
    elements = [el for item in raw for el in _map_markup_element(item)]
    for element in elements:
        if element.kind == "paragraph" and _norm(element.text) in captions:
            element.kind = "caption"
    return ParsedDocument(elements=elements, parser=PARSER_VERSION)


def _parse_markdown(data: bytes, limits: ParseLimits) -> ParsedDocument:
    """Markdown goes through python-markdown (tables, fenced code) and the HTML partitioner."""
    from unstructured.partition.md import partition_md

    text = decode_utf8_strict(data, "Markdown")
    if not text.strip():
        return ParsedDocument(elements=[], parser=PARSER_VERSION)
    raw = partition_md(text=normalize_md_table_delimiters(text), languages=[""])
    elements = [el for item in raw for el in _map_markup_element(item)]
    return ParsedDocument(elements=elements, parser=PARSER_VERSION)


_MD_DELIMITER_RE = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
_MD_FENCE_RE = re.compile(r"^\s{0,3}(```|~~~)")


def _md_cells(line: str) -> list[str]:
    """Cells of a table row, ignoring escaped pipes and the optional outer pipes."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return re.split(r"(?<!\\)\|", inner)


def normalize_md_table_delimiters(text: str) -> str:
    """python-markdown drops a table to a paragraph when the delimiter row's cell count or outer
    pipes differ from the header's (e.g. `a | b` over `---|---|`), which GitHub renders fine and
    real specs contain. Rewrite such delimiter rows to match their header row."""
    lines = text.split("\n")
    in_fence = False
    for i, line in enumerate(lines):
        if _MD_FENCE_RE.match(line):
            in_fence = not in_fence
            continue
        if in_fence or i == 0 or "|" not in line or "|" not in lines[i - 1] or not _MD_DELIMITER_RE.match(line):
            continue  # a bare "---" under a line is a setext heading or a rule, not a table
        header = lines[i - 1].strip()
        width = len(_md_cells(header))
        aligns = [c.strip() or "---" for c in _md_cells(line)][:width]
        aligns += ["---"] * (width - len(aligns))
        row = " | ".join(aligns)
        lines[i] = f"| {row} |" if header.startswith("|") else row
    return "\n".join(lines)


def _parse_text(data: bytes, limits: ParseLimits) -> ParsedDocument:
    """Plain text has no markup, so its headings are unstructured's short-line guesses; they are
    kept as level-1 headings because in notes and READMEs such lines nearly always are."""
    from unstructured.partition.text import partition_text

    text = decode_utf8_strict(data, "text")
    if not text.strip():
        return ParsedDocument(elements=[], parser=PARSER_VERSION)
    raw = partition_text(text=text, languages=[""])
    elements = [el for item in raw for el in _map_markup_element(item)]
    return ParsedDocument(elements=elements, parser=PARSER_VERSION)


def _parse_email(data: bytes, limits: ParseLimits) -> ParsedDocument:
    """The subject becomes the top heading (it is what people search for); body headings sit one
    level below it. Attachments are NOT parsed: they would bypass the type checks and limits
    that every file gets, so they must be ingested as files of their own."""
    from unstructured.partition.email import partition_email

    raw = partition_email(file=BytesIO(data), process_attachments=False, languages=[""])
    elements = [el for item in raw for el in _map_markup_element(item, heading_offset=1)]
    subject = _email_subject(raw)
    if subject:
        elements.insert(0, Element(kind="heading", text=subject, level=1))
    return ParsedDocument(elements=elements, parser=PARSER_VERSION)


def _email_subject(raw: Sequence[Any]) -> str:
    """The Subject header, which unstructured only exposes as per-element metadata."""
    for item in raw:
        subject = getattr(item.metadata, "subject", None)
        if subject and subject.strip():
            return " ".join(subject.split())
    return ""


_PARSERS: dict[str, Callable[[bytes, ParseLimits], ParsedDocument]] = {
    "docx": _parse_docx,
    "pptx": _parse_pptx,
    "html": _parse_html,
    "markdown": _parse_markdown,
    "text": _parse_text,
    "email": _parse_email,
}


# ------------------------------------------------------------------------------------------------
# Decoding
# ------------------------------------------------------------------------------------------------


def decode_utf8_strict(data: bytes, what: str) -> str:
    """Text and Markdown must be UTF-8: guessing a legacy code page silently corrupts accented
    text in the index, while an error tells the owner exactly what to fix. A BOM is allowed."""
    offset = len(UTF8_BOM) if data.startswith(UTF8_BOM) else 0
    try:
        return data[offset:].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(
            f"{what} file is not valid UTF-8 at byte {exc.start + offset}; re-save the file as UTF-8"
        ) from exc


_META_CHARSET_RE = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]{1,40})""", re.I)


def decode_html(data: bytes) -> str:
    """HTML may legitimately be in any charset: honour a BOM, then the <meta> declaration, then
    try UTF-8, and only then guess (cp1252 never fails, so a page always decodes)."""
    if data.startswith(UTF8_BOM):
        return data[len(UTF8_BOM) :].decode("utf-8", errors="replace")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    declared = _META_CHARSET_RE.search(data[:8192])
    if declared:
        try:
            return data.decode(declared.group(1).decode("ascii"), errors="replace")
        except LookupError:
            pass  # unknown charset name: fall through to detection
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return _guess_decode(data)


def _guess_decode(data: bytes) -> str:
    """Last resort for undeclared non-UTF-8 HTML."""
    try:
        from charset_normalizer import from_bytes

        best = from_bytes(data[:1_000_000]).best()
        if best is not None and best.encoding:
            return data.decode(best.encoding, errors="replace")
    except Exception:  # noqa: BLE001 -- detection is best effort
        pass
    return data.decode("cp1252", errors="replace")


# ------------------------------------------------------------------------------------------------
# Element mapping
# ------------------------------------------------------------------------------------------------

_PLAIN_TEXT_TYPES = {"NarrativeText", "Text", "UncategorizedText", "Address", "EmailAddress", "Formula"}
_DROPPED_TYPES = {"PageBreak", "Image", "PageNumber"}


def _clean(text: str | None) -> str:
    """unstructured leaves trailing spaces and tab runs from DOCX tab stops; trim the ends only
    (inner whitespace is the cleaner's job, and control characters are handled there too)."""
    return (text or "").strip()


def _heading_level(depth: int | None, offset: int = 0) -> int:
    """category_depth is 0-based (h1 / Heading 1 / Title -> 0); Element levels are 1..6."""
    return max(1, min(6, (depth or 0) + 1 + offset))


def _map_common(item: Any, text: str) -> Element | None:
    """Mapping shared by every format for the types whose meaning does not depend on it
    (tables are handled by `_table_elements`, as one table may become several elements)."""
    category = type(item).__name__
    if category == "ListItem":
        return Element(kind="list_item", text=text)
    if category == "CodeSnippet":
        return Element(kind="code", text=(item.text or "").strip("\n"))
    if category == "FigureCaption":
        return Element(kind="caption", text=text)
    if category == "Header":
        return Element(kind="page_header", text=text)
    if category == "Footer":
        return Element(kind="page_footer", text=text)
    if category in _PLAIN_TEXT_TYPES:
        return Element(kind="paragraph", text=text)
    return None


def _map_docx_element(item: Any) -> list[Element]:
    """DOCX: a Title is always a real heading/title style; a Caption-styled paragraph is a
    caption (unstructured reports it as plain Text)."""
    category = type(item).__name__
    text = _clean(item.text)
    if category in _DROPPED_TYPES or (not text and category != "Table"):
        return []
    if category == "Title":
        return [Element(kind="heading", text=text, level=_heading_level(item.metadata.category_depth))]
    if category == "Table":
        return _table_elements(item)
    if getattr(item.metadata, "style_name", None) == "Caption":
        return [Element(kind="caption", text=text)]
    mapped = _map_common(item, text)
    return [mapped] if mapped else []


def _map_markup_element(item: Any, heading_offset: int = 0) -> list[Element]:
    """HTML, Markdown, text and e-mail bodies: headings come from h1..h6 / # levels."""
    category = type(item).__name__
    text = _clean(item.text)
    if category in _DROPPED_TYPES or (not text and category != "Table"):
        return []
    if category == "Title":
        return [Element(kind="heading", text=text, level=_heading_level(item.metadata.category_depth, heading_offset))]
    if category == "Table":
        return _table_elements(item)
    mapped = _map_common(item, text)
    return [mapped] if mapped else []


_BULLETS = {"•", "·", "◦", "○", "●", "▪", "■", "-", "–", "—", "*", "o", "\uf0b7", "\uf0a7"}


def _table_elements(item: Any, page: int | None = None) -> list[Element]:
    """A table becomes GitHub Markdown -- unless it is layout rather than data, which HTML
    exports (SEC filings especially) use a lot: a single row or a single cell is a line of text,
    and a bullet-character column is a list. A table without structure info falls back to its
    flat text rather than being lost."""
    html_text = getattr(item.metadata, "text_as_html", None)
    rows = html_table_rows(html_text) if html_text else []
    if not rows:
        text = _clean(item.text)
        return [Element(kind="paragraph", text=text, page=page)] if text else []
    if all(len(row) >= 2 and row[0] in _BULLETS for row in rows):
        return [Element(kind="list_item", text=" ".join(c for c in row[1:] if c), page=page) for row in rows]
    if len(rows) == 1:
        return [Element(kind="paragraph", text=" ".join(c for c in rows[0] if c), page=page)]
    return [Element(kind="table", text=rows_to_markdown(rows), page=page)]


# ------------------------------------------------------------------------------------------------
# HTML table -> GitHub Markdown
# ------------------------------------------------------------------------------------------------


def html_table_rows(table_html: str) -> list[list[str]]:
    """The cell texts of the first <table> in `table_html`, one list per row, with colspans and
    rowspans expanded to empty cells so columns line up, and all-empty rows and columns removed
    (financial filings use them as spacers, and in Markdown they are only noise)."""
    try:
        root = lxml_html.fragment_fromstring(table_html, create_parent="div")
    except (etree.ParserError, ValueError):
        return []
    tables = root.xpath(".//table")
    if not tables:
        return []
    grid = [_merge_unit_cells(row) for row in _expand_spans(tables[0])]
    rows = _drop_empty_rows_and_columns(grid)
    return _drop_empty_rows_and_columns(_shift_orphan_headers(rows)) if len(rows) > 1 else rows


def _table_rows(table: Any) -> list[Any]:
    """Rows of this table only, not of tables nested inside its cells."""
    return table.xpath("./tr | ./thead/tr | ./tbody/tr | ./tfoot/tr")


def _cell_text(cell: Any) -> str:
    return " ".join("".join(cell.itertext()).split())


def _span(cell: Any, attribute: str) -> int:
    """colspan/rowspan, clamped: a hostile colspan="100000" must not allocate a huge grid."""
    try:
        return max(1, min(int(cell.get(attribute, "1")), 50))
    except ValueError:
        return 1


def _expand_spans(table: Any) -> list[list[str]]:
    grid: list[list[str]] = []
    carried: dict[tuple[int, int], str] = {}  # (row, col) cells covered by a rowspan above
    for r, row in enumerate(_table_rows(table)):
        out: list[str] = []
        col = 0
        for cell in row.xpath("./td | ./th"):
            while (r, col) in carried:
                out.append(carried.pop((r, col)))
                col += 1
            text = _cell_text(cell)
            for extra_col in range(_span(cell, "colspan")):
                out.append(text if extra_col == 0 else "")
                for extra_row in range(1, _span(cell, "rowspan")):
                    carried[(r + extra_row, col)] = ""
                col += 1
        while (r, col) in carried:
            out.append(carried.pop((r, col)))
            col += 1
        grid.append(out)
    return grid


_LEADING_UNITS = {"$", "€", "£", "¥", "US$", "CHF", "(", "($", "$("}
_TRAILING_UNITS = {")", "%", ")%", "%)"}


def _merge_unit_cells(row: list[str]) -> list[str]:
    """Financial tables put "$" and ")" / "%" in cells of their own; glue them to the number
    they belong to ("$ 1,234" / "(56)" / "7 %") so a row reads as values, not fragments."""
    row = list(row)
    for i, cell in enumerate(row):
        if cell in _LEADING_UNITS:
            nxt = next((j for j in range(i + 1, len(row)) if row[j]), None)
            if nxt is not None and row[nxt] not in _LEADING_UNITS | _TRAILING_UNITS:
                row[nxt] = f"{cell}{row[nxt]}" if cell.endswith("(") else f"{cell} {row[nxt]}"
                row[i] = ""
        elif cell in _TRAILING_UNITS:
            prev = next((j for j in range(i - 1, -1, -1) if row[j]), None)
            if prev is not None:
                row[prev] = f"{row[prev]}{cell}"
                row[i] = ""
    return row


def _shift_orphan_headers(rows: list[list[str]]) -> list[list[str]]:
    """A header over a column that is empty in every body row (its values moved one cell right,
    e.g. after a "$" column) belongs to the next column that has values but no header."""
    header, body = list(rows[0]), rows[1:]
    width = len(header)
    has_values = [any(row[c] for row in body) for c in range(width)]
    for c in range(width):
        if header[c] and not has_values[c]:
            for target in range(c + 1, width):
                if header[target]:
                    break
                if has_values[target]:
                    header[target], header[c] = header[c], ""
                    break
    return [header, *body]


def _drop_empty_rows_and_columns(grid: list[list[str]]) -> list[list[str]]:
    rows = [row for row in grid if any(cell for cell in row)]
    if not rows:
        return []
    width = max(len(row) for row in rows)
    rows = [row + [""] * (width - len(row)) for row in rows]
    keep = [c for c in range(width) if any(row[c] for row in rows)]
    return [[row[c] for c in keep] for row in rows]


def _escape_cell(text: str) -> str:
    """A pipe would end the cell; a backslash before it would un-escape our escape."""
    return text.replace("\\", "\\\\").replace("|", "\\|")


def rows_to_markdown(rows: list[list[str]]) -> str:
    """GitHub-flavoured Markdown with the first row as the header row."""
    width = max(len(row) for row in rows)
    padded = [[_escape_cell(c) for c in row] + [""] * (width - len(row)) for row in rows]
    lines = ["| " + " | ".join(padded[0]) + " |", "|" + "|".join(["---"] * width) + "|"]
    lines.extend("| " + " | ".join(row) + " |" for row in padded[1:])
    return "\n".join(lines)


def html_table_to_markdown(table_html: str) -> str:
    """Convenience for callers holding raw table HTML; empty string when there is no table."""
    rows = html_table_rows(table_html)
    return rows_to_markdown(rows) if rows else ""


# ------------------------------------------------------------------------------------------------
# HTML main-content extraction (a small Readability)
# ------------------------------------------------------------------------------------------------

# Always chrome, never content.
_REMOVE_TAGS = (
    "script", "style", "noscript", "template", "iframe", "svg", "canvas", "nav", "aside",
    "footer", "form", "button", "select", "textarea", "dialog", "object", "embed",
)  # fmt: skip
_REMOVE_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "dialog", "alert"}
# Mozilla Readability's class/id patterns, which its test pages (our ground truth) were built for.
_UNLIKELY_RE = re.compile(
    r"-ad-|ai2html|banner|breadcrumbs|combx|comment|community|cover-wrap|disqus|extra|footer|gdpr|"
    r"header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|"
    r"supplemental|ad-break|agegate|pagination|pager|popup|yom-remote|navbox|catlinks|mw-jump|"
    r"printfooter|noprint|mw-editsection|hatnote|(?:^|[\s_-])toc(?:$|[\s_-])",
    re.I,
)
_MAYBE_RE = re.compile(r"and|article|body|column|content|main|mathjax|shadow", re.I)
_POSITIVE_RE = re.compile(r"article|body|content|entry|hentry|h-entry|main|page|post|text|blog|story", re.I)
_NEGATIVE_RE = re.compile(
    r"-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|footer|gdpr|masthead|"
    r"media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|"
    r"tags|widget|teaser",
    re.I,
)
_HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_PARAGRAPH_TAGS = ("p", "pre", "td", "blockquote", "li", "dd")


@dataclass
class _Candidate:
    node: Any
    score: float = 0.0


def extract_main_content(text: str) -> tuple[str, set[str]]:
    """The page's main content as an HTML string, and the (whitespace-normalised) texts of its
    figure captions, which unstructured would otherwise drop together with the <figure>.

    Structural chrome (nav, aside, footer, forms, ARIA landmarks that are not main, hidden
    elements, Readability's "unlikely" class names) is always removed. Then, if the page says
    where its content is (<main>, role=main, a single <article>) that wins; otherwise the densest
    block of paragraph text is chosen Readability-style -- but only when it clearly dominates,
    so long documents spread over many sibling blocks (a 10-K, a manual) are kept whole."""
    root = _parse_html_tree(text)
    if root is None:
        return text, set()
    body = root.find(".//body")
    body = body if body is not None else root
    _strip_chrome(body)
    _expand_colspans(body)
    captions = _unwrap_figures(body)
    chosen = _declared_main(body)
    if chosen is None:
        chosen = _densest_block(body)
    if chosen is None or chosen is body:
        return etree.tostring(root, encoding="unicode", method="html"), captions
    return _wrap_as_document([*_page_title(chosen, body), chosen]), captions


def _parse_html_tree(text: str) -> Any | None:
    parser = lxml_html.HTMLParser(remove_comments=True, remove_pis=True)
    try:
        return lxml_html.document_fromstring(text, parser=parser)
    except (etree.ParserError, ValueError):
        return None


def _class_and_id(node: Any) -> str:
    return f"{node.get('class') or ''} {node.get('id') or ''}"


def _is_hidden(node: Any) -> bool:
    return (
        node.get("hidden") is not None
        or node.get("aria-hidden") == "true"
        or bool(_HIDDEN_STYLE_RE.search(node.get("style") or ""))
    )


def _strip_chrome(body: Any) -> None:
    """Remove everything that is chrome on any page. Removal keeps the text that follows a
    removed element (its "tail"), which belongs to the parent."""
    for node in list(body.iter(*_REMOVE_TAGS)):
        _drop(node)
    for node in list(body.iter("header")):
        if not _has_ancestor(node, ("article", "main")):
            _drop(node)
    total = max(1, _text_len(body))
    for node in list(body.iter()):
        if not isinstance(node.tag, str) or node.getparent() is None:
            continue
        if _is_chrome(node) and _text_len(node) < 0.5 * total:
            _drop(node)
    for node in list(body.iter("ul", "ol")):
        if node.getparent() is not None and _is_link_list(node):
            _drop(node)


def _is_link_list(node: Any) -> bool:
    """A list of short links -- menus, language switchers, tables of contents, "see also" --
    is navigation even when no class name says so."""
    items = node.xpath("./li")
    if len(items) < 5 or _has_ancestor(node, ("table",)):
        return False
    average = _text_len(node) / len(items)
    return average < 50 and _link_density(node) > 0.8


def _is_chrome(node: Any) -> bool:
    if node.tag in ("body", "html", "a", "main", "article") or _has_ancestor(node, _HEADING_TAGS):
        return False
    if (node.get("role") or "").lower() in _REMOVE_ROLES or _is_hidden(node):
        return True
    match = _class_and_id(node)
    if not _UNLIKELY_RE.search(match) or _MAYBE_RE.search(match):
        return False
    return not _has_ancestor(node, ("table", "code", "pre"))


def _drop(node: Any) -> None:
    if node.getparent() is not None:
        node.drop_tree()


def _has_ancestor(node: Any, tags: Iterable[str]) -> bool:
    wanted = set(tags)
    return any(a.tag in wanted for a in node.iterancestors())


_WS_RE = re.compile(r"\s+")


def _text_len(node: Any) -> int:
    """Visible characters, not counting whitespace (indentation would skew every ratio)."""
    return len(_WS_RE.sub("", "".join(node.itertext())))


def _unwrap_figures(body: Any) -> set[str]:
    """Replace each <figure> by a paragraph holding its caption (the image itself carries no
    text); return the caption texts so their elements can be typed "caption"."""
    captions: set[str] = set()
    for figure in list(body.iter("figure")):
        if figure.getparent() is None:
            continue
        caption = figure.find(".//figcaption")
        text = _norm(" ".join(caption.itertext())) if caption is not None else ""
        if not text:
            _drop(figure)
            continue
        paragraph = etree.Element("p")
        paragraph.text = text
        paragraph.tail = figure.tail
        figure.getparent().replace(figure, paragraph)
        captions.add(text)
    return captions


def _expand_colspans(body: Any) -> None:
    """unstructured drops colspan when it rebuilds a table, which shifts every header after a
    spanning cell one column left; writing the span out as empty cells keeps columns aligned."""
    for cell in list(body.xpath(".//td[@colspan] | .//th[@colspan]")):
        extra = _span(cell, "colspan") - 1
        del cell.attrib["colspan"]
        for _ in range(extra):
            cell.addnext(etree.Element(cell.tag))


def _declared_main(body: Any) -> Any | None:
    """<main>, role=main, or the only <article> -- when it actually holds text."""
    for xpath in (".//main", ".//*[@role='main']", ".//article"):
        found = body.xpath(xpath)
        if xpath == ".//article":
            found = [a for a in found if not _has_ancestor(a, ("article",))]
            if len(found) != 1:
                continue
        if found and _text_len(found[0]) >= 200:
            return found[0]
    return None


def _densest_block(body: Any) -> Any | None:
    """Readability's scoring: each paragraph scores its parent (fully) and grandparent (half)
    by length and commas; the best container, discounted by link density, is the content.
    Returns None (keep everything) unless that container holds most of the page's prose."""
    candidates: dict[Any, _Candidate] = {}
    total_prose = 0.0
    for para in body.iter(*_PARAGRAPH_TAGS):
        text = "".join(para.itertext()).strip()
        if len(text) < 25:
            continue
        score = 1 + text.count(",") + min(len(text) / 100, 3)
        total_prose += len(text)
        for depth, ancestor in enumerate(list(para.iterancestors())[:3]):
            cand = candidates.setdefault(ancestor, _Candidate(ancestor, _initial_score(ancestor)))
            cand.score += score / (1 if depth == 0 else depth * 2)
    if not candidates or total_prose == 0:
        return None
    for cand in candidates.values():
        cand.score *= 1 - _link_density(cand.node)
    best = max(candidates.values(), key=lambda c: c.score).node
    best = _widen(best, body)
    if _prose_len(best) < 0.6 * total_prose:
        return None
    return best


_TAG_SCORES = {"div": 5, "pre": 3, "td": 3, "blockquote": 3, "th": -5}
_TAG_SCORES.update(dict.fromkeys(("form", "ol", "ul", "li", "dl", "dd", "dt", "address"), -3))


def _initial_score(node: Any) -> float:
    """Readability's prior: divs and cells tend to hold prose, lists and forms do not."""
    base = _TAG_SCORES.get(node.tag, 0)
    match = _class_and_id(node)
    if _POSITIVE_RE.search(match):
        base += 25
    if _NEGATIVE_RE.search(match):
        base -= 25
    return base


def _link_density(node: Any) -> float:
    total = _text_len(node)
    if not total:
        return 0.0
    linked = sum(_text_len(a) for a in node.iter("a"))
    return min(1.0, linked / total)


def _prose_len(node: Any) -> int:
    return sum(len(t) for p in node.iter(*_PARAGRAPH_TAGS) if len(t := "".join(p.itertext()).strip()) >= 25)


def _widen(node: Any, body: Any) -> Any:
    """Climb while the parent adds little text: that picks up the article's own title and lead
    paragraph, which usually sit just outside the densest block."""
    while node is not body and node.getparent() is not None:
        parent = node.getparent()
        if _text_len(parent) > 1.3 * max(1, _text_len(node)):
            break
        node = parent
    return node


def _page_title(chosen: Any, body: Any) -> list[Any]:
    """The page's single <h1> when the content block lacks it: news sites put the headline in a
    header band above the article body, and the headline is the best heading the content has."""
    if chosen.find(".//h1") is not None:
        return []
    titles = body.xpath(".//h1")
    return titles if len(titles) == 1 else []


def _wrap_as_document(nodes: list[Any]) -> str:
    inner = "".join(etree.tostring(n, encoding="unicode", method="html", with_tail=False) for n in nodes)
    return f"<html><body>{inner}</body></html>"


# ------------------------------------------------------------------------------------------------
# DOCX
# ------------------------------------------------------------------------------------------------


def _partition_docx(data: bytes) -> list[Any]:
    from unstructured.partition.docx import partition_docx

    return partition_docx(
        file=BytesIO(data), include_page_breaks=False, infer_table_structure=True, languages=[""]
    )


# ------------------------------------------------------------------------------------------------
# PPTX
# ------------------------------------------------------------------------------------------------

_TITLE_PLACEHOLDERS = {"TITLE", "CENTER_TITLE", "VERTICAL_TITLE"}
_SUBTITLE_PLACEHOLDERS = {"SUBTITLE"}


@dataclass
class _SlideHints:
    """What unstructured's element stream does not say about a slide: which texts are in the
    title/subtitle placeholders, and which paragraphs are auto-numbered list items (unstructured
    only recognises bullet characters, so "1. 2. 3." lists come out as short "titles")."""

    titles: list[str] = field(default_factory=list)
    subtitles: list[str] = field(default_factory=list)
    numbered: set[str] = field(default_factory=set)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _pptx_slide_hints(data: bytes) -> list[_SlideHints]:
    import pptx

    presentation = pptx.Presentation(BytesIO(data))
    return [_slide_hints(slide) for slide in presentation.slides]


def _slide_hints(slide: Any) -> _SlideHints:
    hints = _SlideHints()
    for shape in _iter_shapes(slide.shapes):
        if not getattr(shape, "has_text_frame", False) or not shape.has_text_frame:
            continue
        kind = _placeholder_kind(shape)
        for paragraph in shape.text_frame.paragraphs:
            text = _norm(paragraph.text)
            if not text:
                continue
            if kind in _TITLE_PLACEHOLDERS:
                hints.titles.append(text)
            elif kind in _SUBTITLE_PLACEHOLDERS:
                hints.subtitles.append(text)
            if paragraph._p.xpath("./a:pPr/a:buAutoNum"):
                hints.numbered.add(text)
    return hints


def _iter_shapes(shapes: Any) -> Iterable[Any]:
    for shape in shapes:
        if getattr(shape, "shapes", None) is not None and shape.shape_type == 6:  # group shape
            yield from _iter_shapes(shape.shapes)
        else:
            yield shape


def _placeholder_kind(shape: Any) -> str:
    if not getattr(shape, "is_placeholder", False):
        return ""
    try:
        return shape.placeholder_format.type.name or ""
    except (AttributeError, ValueError):
        return ""


def _map_slide(items: list[Any], slide_no: int, hints: _SlideHints) -> list[Element]:
    """One slide: its title first (unstructured orders shapes top-to-bottom, so a table placed
    above the title would otherwise be filed under the previous slide's heading), then the
    rest in reading order. A slide without a title placeholder promotes its first short
    non-list line (a text box used as title) unless it ends with ':' (a lead-in, not a title)."""
    title_set, subtitle_set = set(hints.titles), set(hints.subtitles)
    headings: list[Element] = []
    body: list[Element] = []
    promote = not title_set
    for item in items:
        category = type(item).__name__
        text = _clean(item.text)
        if category in _DROPPED_TYPES or (not text and category != "Table"):
            continue
        key = _norm(text)
        if category == "Title" and key in title_set:
            headings.append(Element(kind="heading", text=text, page=slide_no, level=1 if not headings else 2))
        elif category == "Title" and key in subtitle_set:
            body.append(Element(kind="heading", text=text, page=slide_no, level=2))
        elif key in hints.numbered and category != "Table":
            body.append(Element(kind="list_item", text=text, page=slide_no))
        elif category == "Title" and promote and not text.endswith(":"):
            headings.insert(0, Element(kind="heading", text=text, page=slide_no, level=1))
            promote = False
        elif category == "Title":
            body.append(Element(kind="paragraph", text=text, page=slide_no))
        elif category == "Table":
            body.extend(_table_elements(item, page=slide_no))
        else:
            mapped = _map_common(item, text)
            if mapped:
                mapped.page = slide_no
                body.append(mapped)
    return headings + body


# ------------------------------------------------------------------------------------------------
# Skipping unstructured's spaCy heuristics where their answer is thrown away
# ------------------------------------------------------------------------------------------------
#
# unstructured runs spaCy (sentence split + POS tags) on every paragraph only to choose between
# NarrativeText and Text -- both become "paragraph" here. That is ~90% of DOCX time (18 s of 20 s
# for the 870-page DOJ handbook) and, on one 5 MB paragraph, ~20 s and ~3 GB of memory. So, while
# one of *our* parse calls runs (a ContextVar, so other callers in the process are unaffected):
# * DOCX and HTML (Markdown and e-mail bodies go through HTML): the narrative test is skipped;
# * text and PPTX: the answer matters there (a short line that is not narrative may become a
#   title), so only long blocks -- which can never be titles (> 12 words) -- skip it.

_FAST_HEURISTICS: contextvars.ContextVar[bool] = contextvars.ContextVar("rag_fast_heuristics", default=False)
_TITLE_MAX_WORDS = 12


def _narrative_always(text: str) -> bool | None:
    return True


def _narrative_if_long(text: str) -> bool | None:
    if len(text) > 400 or len(text.split(" ")) > _TITLE_MAX_WORDS:
        return True
    return None  # ask the real heuristic


def _shortcut(original: Callable[..., bool], fast: Callable[[str], bool | None]) -> Callable[..., bool]:
    @functools.wraps(original)
    def wrapper(text: str, *args: Any, **kwargs: Any) -> bool:
        if _FAST_HEURISTICS.get():
            answer = fast(text)
            if answer is not None:
                return answer
        return original(text, *args, **kwargs)

    wrapper._rag_shortcut = True  # type: ignore[attr-defined]
    return wrapper


@functools.lru_cache(maxsize=1)
def _install_heuristic_shortcuts() -> None:
    """Idempotent. If a future unstructured renames these internals, nothing is patched and
    parsing stays correct, only slower."""
    import importlib

    targets = {
        "unstructured.partition.docx": _narrative_always,
        "unstructured.partition.html.parser": _narrative_always,
        "unstructured.partition.text": _narrative_if_long,
        "unstructured.partition.pptx": _narrative_if_long,
    }
    for module_name, fast in targets.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        original = getattr(module, "is_possible_narrative_text", None)
        if callable(original) and not getattr(original, "_rag_shortcut", False):
            module.is_possible_narrative_text = _shortcut(original, fast)

