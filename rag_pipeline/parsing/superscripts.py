"""Superscript digits set against the word or figure before them: a footnote marker after an
amount ("USD 1,234" + superscript "1"), an exponent ("10" + superscript "6"), a note after a word
("Commission" + superscript "3").

Every parser read the superscript as ordinary text, so the index held "USD 1,2341", "106" and
"Commission3": figures that the document never states (and that the citation checker then
compared claims with), and words that a search for "Commission" no longer matched. A superscript
that starts with a digit and follows a letter or digit directly is written after a caret, as
plain text writes exponents ("10^6", "USD 1,234^1"): the figure and the word keep their own
terms. Ordinals ("1" + superscript "st") and superscripts after a space are left as they were.
Each parser applies this where its format marks superscripts: PyMuPDF's span flag, Word's
`w:vertAlign`, HTML's `<sup>`.
"""

from __future__ import annotations

MARK = "^"


def marked(before: str, superscript: str) -> str:
    """`superscript` as it joins `before` (the text directly in front of it, any length)."""
    if superscript[:1].isdigit() and before[-1:].isalnum():
        return MARK + superscript
    return superscript
