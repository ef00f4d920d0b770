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

from rag_pipeline.parsing.superscripts import marked

NUMBER_FORM = re.compile("[\u00b2\u00b3\u00b9\u00bc-\u00be\u2044\u2070\u2074-\u207e\u2080-\u208e\u2150-\u2189\u2215]")
_VULGAR = re.compile("[\u00bc-\u00be\u2150-\u215f\u2189]")
_SUPERSCRIPT_RUN = re.compile("[\u00b2\u00b3\u00b9\u2070\u2074-\u207e]+")
_SUBSCRIPT_RUN = re.compile("[\u2080-\u208e]+")
_ROMAN = re.compile("[\u2160-\u2188]+")


def plain_numbers(text: str) -> str:
    """`text` with its number forms written as plain text writes them (see the module)."""
    if NUMBER_FORM.search(text) is None:
        return text
    text = _VULGAR.sub(_fraction, text)
    text = text.replace("\u2044", "/").replace("\u2215", "/")
    text = _SUPERSCRIPT_RUN.sub(lambda m: marked(m.string[max(m.start() - 1, 0):m.start()], _nfkc(m)), text)
    text = _SUBSCRIPT_RUN.sub(_nfkc, text)
    return _ROMAN.sub(_nfkc, text)


def _fraction(match: re.Match[str]) -> str:
    """"½" as "1/2"; after a digit apart from it ("1½" is one and a half, "1 1/2", not 11/2)."""
    plain = unicodedata.normalize("NFKC", match.group()).replace("\u2044", "/")
    before = match.string[match.start() - 1:match.start()] if match.start() else ""
    return f" {plain}" if before.isdigit() else plain


def _nfkc(match: re.Match[str]) -> str:
    return unicodedata.normalize("NFKC", match.group()).replace("\u2212", "-")
