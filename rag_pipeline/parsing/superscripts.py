"""Superscript digits set against the word or figure before them: a footnote marker after an
amount ("USD 1,234" + superscript "1"), an exponent ("10" + superscript "6"), a note after a word
("Commission" + superscript "3").

Every parser read the superscript as ordinary text, so the index held "USD 1,2341", "106" and
"Commission3": figures that the document never states (and that the citation checker then
compared claims with), and words that a search for "Commission" no longer matched. A superscript
that starts with a digit and follows a letter or digit directly is written after a caret, as
plain text writes exponents ("10^6", "10^-3", "USD 1,234^1"): the figure and the word keep their
own terms. Ordinals ("1" + superscript "st") and superscripts after a space are left as they were.
Each parser applies this where its format marks superscripts: PyMuPDF's span flag, Word's
`w:vertAlign`, HTML's `<sup>` (also raw HTML inside Markdown).
"""

from __future__ import annotations

from typing import Any

MARK = "^"


_SIGNS = "+-\u2212"  # a signed exponent: "10" + superscript "-3" is 10^-3, not the range "10-3"


def marked(before: str, superscript: str) -> str:
    """`superscript` as it joins `before` (the text directly in front of it, any length)."""
    digit_first = superscript[:1].isdigit() or (superscript[:1] in _SIGNS and superscript[1:2].isdigit())
    if digit_first and before[-1:].isalnum():
        return MARK + superscript
    return superscript


def mark_sup_elements(root: Any) -> int:
    """Each `<sup>` of an lxml HTML tree that starts with a digit right after a letter or digit
    marked (`marked`): "10<sup>6</sup>" reads "10^6", not "106". Wikipedia's bracketed
    references ("[23]") start with a bracket and stay as they are. Returns how many were marked."""
    count = 0
    for sup in root.iter("sup"):
        holder = next((n for n in sup.iter() if isinstance(n.tag, str) and n.text), None)
        if holder is None or holder.text is None:
            continue
        previous = sup.getprevious()
        before = (previous.tail if previous is not None else sup.getparent().text) or ""
        if not before and previous is not None:
            before = previous.text_content()
        text = marked(before, holder.text)
        count += text != holder.text
        holder.text = text
    return count
