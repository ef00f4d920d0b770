"""Numbers written with Unicode's number forms, as plain text writes them.

Typeset documents write fractions, powers and chemical formulae with characters of their own,
and PostgreSQL's text parser reads none of them as a reader does: "½" and "²" are no term at all
(dropped), "3⁄8" (fraction slash) is the terms 3 and 8 where "3/8" is the one term 3/8, "10⁶" is
the term 10, "H₂O" the terms h and o, "Ⅻ" a letter no one types. So a question that types
"3/8 inch", "CO2" or "10^6" never met the passage that prints them, and the citation checker
read "10⁶" as 106. Each is written as plain text writes it, in documents and questions alike
(`controls.as_indexed`): a fraction "1/2" ("1½" is "1 1/2"), the fraction and division slashes
"/", a power after a caret as the parsers mark superscript formatting (parsing/superscripts.py:
"10^6", "km^2", "10^-3"; a superscript after a space is only its digits), subscripts as digits
("H2O"), Roman numeral characters as letters ("XII").
"""

from __future__ import annotations

import re
import unicodedata
from itertools import groupby

from rag_pipeline.parsing.superscripts import marked

_SUPERSCRIPTS = "\u00b2\u00b3\u00b9\u2070\u2074-\u207e"
_SUBSCRIPTS = "\u2080-\u208e"
_ROMAN = "\u2160-\u2188"
_VULGAR = "\u00bc-\u00be\u2150-\u215f\u2189"
_SLASHES = "\u2044\u2215"
NUMBER_FORM = re.compile(f"[{_SUPERSCRIPTS}{_SUBSCRIPTS}{_ROMAN}{_VULGAR}{_SLASHES}]+")


def _table() -> dict[str, tuple[str, str]]:
    """Each number-form character -> (its kind, how plain text writes it)."""
    table = {}
    for kind, chars in (("superscript", _SUPERSCRIPTS), ("subscript", _SUBSCRIPTS), ("roman", _ROMAN),
                        ("vulgar", _VULGAR), ("slash", _SLASHES)):
        for char in re.findall(f"[{chars}]", "".join(map(chr, range(0xB0, 0x2216)))):
            plain = unicodedata.normalize("NFKC", char).replace("\u2044", "/").replace("\u2212", "-")
            table[char] = (kind, "/" if kind == "slash" else plain)
    return table


_TABLE = _table()


def plain_numbers(text: str) -> str:
    """`text` with its number forms written as plain text writes them (see the module). Runs of
    them are found by one character class (a C-level scan: prose pays one search) and each run
    is read in Python, kind by kind."""
    if NUMBER_FORM.search(text) is None:
        return text
    return NUMBER_FORM.sub(_plain_run, text)


def _plain_run(match: re.Match[str]) -> str:
    before = match.string[match.start() - 1:match.start()] if match.start() else ""
    out = []
    for kind, chars in groupby(match.group(), key=lambda c: _TABLE[c][0]):
        piece = "".join(chars)
        if kind == "vulgar":  # "½" as "1/2"; after a digit (or fraction) apart from it ("1½" is 1 1/2, not 11/2)
            for char in piece:
                plain = _TABLE[char][1]
                out.append(f" {plain}" if before.isnumeric() else plain)
                before = char
        else:
            plain = "".join(_TABLE[c][1] for c in piece)
            out.append(marked(before, plain) if kind == "superscript" else plain)
        before = piece[-1]
    return "".join(out)
