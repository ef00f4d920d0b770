"""Markdown text made ready before python-markdown reads it (markdown_direct.py renders it).

Each step answers a way python-markdown went wrong on real or hostile text: headings without a
blank line before them made a changelog quadratic (`headings_apart`), Markdown inside a raw
<details> stayed raw text (`markdown_inside_details`), and a list indented too deep for the
HTML parser took minutes before failing on Python's recursion limit (`check_source_nesting`)."""

from __future__ import annotations

import re

from rag_pipeline.parsing.types import ParseError

LXML_DEPTH = 255  # from this depth lxml's default HTML parser (the former path's) drops the rest of the file
_EXTENSIONS = ["tables", "fenced_code"]  # unstructured.partition.md's defaults


_HEADING_LINE = re.compile(r"(?m)^#")  # an ATX heading as python-markdown reads one (no space needed)
_RAW_HTML_LINE = re.compile(r"(?m)^ {0,3}<")


def headings_apart(text: str) -> str:
    """`text` with a blank line before each ATX heading line that follows a non-blank one,
    outside fenced code: python-markdown splits a block at such a heading anyway, so the HTML is
    the same, but it splits the block's whole remainder again at every one (the tables
    extension's test reads every line of it), which made a changelog of headings and items
    without blank lines quadratic: 1.8 s for 4,000 entries (253 KB), ~30 s a megabyte.
    Left as they are: fenced code (found with python-markdown's own pattern); a block holding a
    "|" (the tables extension, which runs before headings, takes every line of a table's block
    as a row, headings too); a block that opens indented (code, or a list item's continuation,
    which python-markdown parses whole inside the item, headings too); and a text with raw HTML
    lines or comments, whose blocks python-markdown reads by other rules."""
    from markdown.extensions.fenced_code import FencedBlockPreprocessor

    if "<!--" in text or _RAW_HTML_LINE.search(text) or not _HEADING_LINE.search(text):
        return text
    fences = [m.span() for m in FencedBlockPreprocessor.FENCED_BLOCK_RE.finditer(text)]
    out: list[str] = []
    at, fence, previous_blank, kept = 0, 0, True, False
    for line in text.split("\n"):  # "\n" only: str.splitlines would also break at \f, \x1c, \u2028 ...
        while fence < len(fences) and fences[fence][1] <= at:
            fence += 1
        fenced = fence < len(fences) and fences[fence][0] <= at
        if line.startswith("#") and not previous_blank and not kept and not fenced:
            out.append("")
        out.append(line)
        at += len(line) + 1
        blank = not line.strip()
        if blank:
            kept = False
        elif previous_blank:  # the line opening a block: kept whole when indented or holding "|"
            kept = line[:1] in (" ", "\t") or "|" in line
        else:
            kept = kept or "|" in line
        previous_blank = blank
    return "\n".join(out)


_DETAILS_LINE = re.compile(r"(?m)^( {0,3})<details(?=[\s>])")


def markdown_inside_details(text: str) -> tuple[str, list[str]]:
    """`text` with each raw <details> block marked to have its Markdown read (python-markdown's
    md_in_html; GitHub renders Markdown there, python-markdown kept it as raw text: "#####"
    headings, fences), and the extensions to render it with. A text without one is left as it
    is, rendered as before; a <details> line inside fenced code is code and stays."""
    if "<details" not in text:
        return text, _EXTENSIONS
    from markdown.extensions.fenced_code import FencedBlockPreprocessor

    fences = [m.span() for m in FencedBlockPreprocessor.FENCED_BLOCK_RE.finditer(text)]

    def marked(match: re.Match[str]) -> str:
        fenced = any(start <= match.start() < end for start, end in fences)
        return match.group(0) if fenced else f'{match.group(1)}<details markdown="1"'

    out = _DETAILS_LINE.sub(marked, text)
    return (out, [*_EXTENSIONS, "md_in_html"]) if out != text else (text, _EXTENSIONS)


TOO_DEEP = (f"Markdown nests HTML or lists {LXML_DEPTH + 1} levels deep or more; text that deep is not read -- "
             "flatten the nesting (raw <div>, <blockquote> or list levels)")
_NESTING_LINE = re.compile(r"(?m)^([ \t]*)((?:>[ \t]?)*)[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]")
_TAB = 4  # python-markdown's tab_length: a list nests one level per four columns of indentation


def check_source_nesting(text: str) -> None:
    """Refuse, before python-markdown reads it, a text whose list items are indented (or quoted)
    so deep that the HTML would pass LXML_DEPTH: python-markdown's time grows with the square of
    such a text (a list 1,500 levels deep took 271 s) before it fails on Python's recursion limit.
    Each list level is two HTML levels (<ul><li>), each ">" one (<blockquote>). Lines inside
    fenced code are skipped (code is not nested)."""
    from markdown.extensions.fenced_code import FencedBlockPreprocessor

    fences = [m.span() for m in FencedBlockPreprocessor.FENCED_BLOCK_RE.finditer(text)] if "`" in text or "~" in text else []
    for match in _NESTING_LINE.finditer(text):
        indent = len(match.group(1).expandtabs(_TAB))
        quotes = match.group(2).count(">")
        if 2 * (indent // _TAB) + quotes < LXML_DEPTH:
            continue
        if not any(start <= match.start() < end for start, end in fences):
            raise ParseError(TOO_DEEP)
