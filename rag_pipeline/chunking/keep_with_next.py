"""Which element must share a chunk with the one after it: a table's caption or the sentence
that introduces a table or a list ("Table 3. Allowances by grade", "The rates are as follows:").

Packed greedily, such a line ended the chunk before its table whenever the table did not fit
after it: the caption was then the last words of a chunk about something else, and the table a
chunk whose rows said not what they were (found on the EU report of ICDAR 2013, eu-012, whose
"Table 1" and "Table 3" ended the chunks before their tables). The chunker therefore starts the
table's chunk with the line instead (packing.pack), where both fit the budget together.
"""

from __future__ import annotations

import re

from rag_pipeline.parsing.types import Element

MAX_INTRO_CHARS = 400  # a caption or lead-in sentence; a longer paragraph is text in its own right
_CAPTION = re.compile(
    r"^\s*(?:table|tab\.|tabelle|tableau|tabla|tabella|tabel|tabulka|tabela|taulukko|tabell|exhibit|schedule|"
    r"appendix table|annex table)\s*[A-Z]?[\dIVXivx]+(?:[.\-–][\dA-Za-z]+)*\b",
    re.IGNORECASE,
)


def keeps_with_next(element: Element, following: Element) -> bool:
    """True where `element` introduces `following`: a caption (or a caption-like paragraph) before
    a table, or a short paragraph ending in a colon before a table or a list."""
    if element.kind not in ("caption", "paragraph") or len(element.text) > MAX_INTRO_CHARS:
        return False
    if following.kind == "table":
        return element.kind == "caption" or bool(_CAPTION.match(element.text)) or _leads_in(element.text)
    return following.kind == "list_item" and _leads_in(element.text)


def _leads_in(text: str) -> bool:
    return text.rstrip().endswith(":")
