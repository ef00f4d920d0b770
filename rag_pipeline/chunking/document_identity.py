"""A document's identity line: which document a chunk belongs to, said in one short line that is
embedded and full-text indexed with every chunk of it.

A passage from one of a series of near-identical quarterly reports ("revenue increased 4%")
never says which company or quarter it is about; only its document does. The line holds the
document's title (its own title property, else its first heading, else a cleaned file name) and
the identifying facts the document states about itself: for SEC filings the form, the
registrant's exact name, the period ("fiscal year ended December 31, 2021") and the commission
file number.

Everything here reads text that came from the file (a title property, a file name), so the line
goes through the same control-character neutralising and secret redaction as body text, and is
bounded in characters here and in tokens by the chunker.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from rag_pipeline.chunking.paragraph_headings import heading_style
from rag_pipeline.cleaning.clean import make_safe
from rag_pipeline.parsing.types import Element

MAX_TITLE_CHARS = 150
MAX_IDENTITY_CHARS = 320
SEPARATOR = " | "
_TITLE_ELEMENTS = 5  # a heading further in names a section, not the document
_FACT_ELEMENTS = 80  # SEC cover pages state their facts within the first few dozen paragraphs

_FILE_NAME_RE = re.compile(r"^[\w.\-~ ]+\.(?:html?|pdf|docx?|pptx?|txt|md|rtf|xml|eml)$", re.I)
_GENERIC_TITLES = {"untitled", "document", "title", "presentation", "powerpoint presentation", "slide 1",
                   "microsoft word document", "none", "unknown", "default"}
# Headings that name a part of any document, not the document: "1 Introduction", "Abstract".
_SECTION_HEADING_RE = re.compile(
    r"^(?:\d+(?:\.\d+)*\.?\s|[IVX]+\.\s|(?:abstract|introduction|contents|table of contents|summary|"
    r"preface|foreword|overview|einleitung|inhalt|inhaltsverzeichnis|sommaire|résumé|obsah)$)",
    re.I,
)
_WORD_EXPORT_RE = re.compile(r"^(?:microsoft (?:word|powerpoint) - )", re.I)
_FORM_RE = re.compile(r"\bFORM\s+(10-K(?:T|405)?|10-Q(?:T)?|20-F|40-F|8-K|6-K|S-1|N-CSR)\b", re.I)
_PERIOD_RE = re.compile(
    r"\bfor the (fiscal year|quarterly period|transition period|year|period|quarter) ended:?\s+"
    r"([A-Z][a-z]{2,8}\.?\s+\d{1,2},?\s+\d{4}|\d{1,2}\.?\s+[A-Z][a-z]{2,8}\s+\d{4})",
    re.I,
)
_FILE_NUMBER_RE = re.compile(r"\bcommission\s+file\s+(?:number|no\.?)\s*:?\s*(\d{1,4}-\d{3,6}(?:-\d{1,4})?)", re.I)
_EXACT_NAME_RE = re.compile(r"^\(?\s*exact name of (?:the )?(?:small business )?(?:registrant|issuer|company)", re.I)


def document_identity(title: str | None, elements: Sequence[Element], uri: str) -> str:
    """The identity line for a document, or "" when nothing identifies it. `title` is the
    file's title property (None when it has none); `elements` are the cleaned elements."""
    facts = filing_facts(elements)
    name = _usable(title) or _first_heading(elements) or ("" if facts else _file_title(uri))
    parts: list[str] = []
    for part in [_shorten(name, MAX_TITLE_CHARS), *facts]:
        if part and not any(part.casefold() in p.casefold() for p in parts):
            parts.append(part)
    line = _shorten(SEPARATOR.join(parts), MAX_IDENTITY_CHARS)
    safe, _ = make_safe([Element("paragraph", line)])
    return " ".join(safe[0].text.split()) if safe else ""


def filing_facts(elements: Sequence[Element]) -> list[str]:
    """The form, registrant, period and commission file number an SEC filing states on its cover
    page, in that order; [] for documents that state none of them."""
    texts = [" ".join(e.text.split()) for e in elements[:_FACT_ELEMENTS] if e.kind != "table"]
    form = period = file_number = registrant = ""
    for i, text in enumerate(texts):
        if not form and (m := _FORM_RE.search(text)) and len(text) <= 120:
            form = f"Form {m.group(1).upper()}"
        if not period and (m := _PERIOD_RE.search(text)):
            period = f"{m.group(1).lower()} ended {' '.join(m.group(2).split())}"
        if not file_number and (m := _FILE_NUMBER_RE.search(text)):
            file_number = f"Commission file number {m.group(1)}"
        if not registrant and i and _EXACT_NAME_RE.match(text) and len(texts[i - 1]) <= 120:
            registrant = texts[i - 1]
    return [f for f in (form, registrant, period, file_number) if f]


def _usable(title: str | None) -> str:
    """A title property worth showing: whitespace collapsed, not empty, not a file name or a
    template's placeholder ("Untitled", "Document1", "Microsoft Word - x.doc")."""
    text = _WORD_EXPORT_RE.sub("", " ".join((title or "").split()))
    letters = sum(ch.isalpha() for ch in text)
    if letters < 2 or _FILE_NAME_RE.match(text) or re.sub(r"\d+$", "", text).strip().casefold() in _GENERIC_TITLES:
        return ""
    if " " not in text and (re.search(r"[_\d]", text) or re.search(r"\.\w{2,4}$", text)):
        return ""  # a machine name ("Sb_2025_270_IZ", "10811.exe", "glxz-10k_20211231.htm")
    return text


def _first_heading(elements: Sequence[Element]) -> str:
    """The document's opening heading: a heading among its first few elements that names the
    document rather than a part of it ("1 Introduction", "PART I", "Abstract" do not)."""
    for element in elements[:_TITLE_ELEMENTS]:
        text = " ".join(element.text.split())
        if element.kind != "heading" or _SECTION_HEADING_RE.match(text):
            continue
        if heading_style(text) not in (None, "caps", "bold"):
            continue
        if text := _usable(text):
            return text
    return ""


def _file_title(uri: str) -> str:
    """The file name without folders or extension, separators as spaces: the title of last resort."""
    stem = PurePosixPath(uri.replace("\\", "/")).stem
    return " ".join(re.sub(r"[_\-.+]+", " ", stem).split())


def _shorten(text: str, limit: int) -> str:
    """`text` cut at a word boundary to at most `limit` characters, marked with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0] if " " in text[: limit - 1] else text[: limit - 1]
    return cut.rstrip(" |,;:") + "\u2026"
