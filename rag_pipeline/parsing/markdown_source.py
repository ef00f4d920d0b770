"""Markdown text made ready before python-markdown reads it (markdown_direct.py renders it).

Each step answers a way python-markdown went wrong on real or hostile text: Markdown inside a raw
<details> stayed raw text (`markdown_inside_details`), and a list indented too deep for the
HTML parser took minutes before failing on Python's recursion limit (`check_source_nesting`)."""

from __future__ import annotations

import re

from rag_pipeline.parsing.types import ParseError

_TAB = 4  # python-markdown's tab_length: a list nests one level per four columns of indentation
LXML_DEPTH = 255  # from this depth lxml's default HTML parser (the former path's) drops the rest of the file
_EXTENSIONS = ["tables", "fenced_code"]  # unstructured.partition.md's defaults


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
