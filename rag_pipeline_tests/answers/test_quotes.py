"""A citation's quote as people and generators write quotes (answers/quotes.py): marks around it,
an ellipsis for left-out words, the writer's full stop; a changed, reordered or fragmentary quote
is still not found. Through `verify` on a real sync: test_verify.py."""

from __future__ import annotations

import pytest

from rag_pipeline.answers.quotes import quoted

TEXT = ("A business trip abroad must be approved in advance by the head of department; "
        "requests go in ten working days ahead.")


@pytest.mark.parametrize("quote", [
    "approved in advance ... head of department",
    "approved in advance … head of department",
    "approved in advance [...] head of department",
    "approved in advance […] head of department",
    "approved in advance (...) requests go in ten working days ahead.",
    '"approved in advance by the head of department."',
    "\u201capproved  in ADVANCE by the head of department\u201d",
    "«approved in advance»",
    "approved in advance by the head of department.",
    "...approved in advance by the head of department...",
])
def test_a_quote_written_as_quotes_are_written_is_found(quote: str) -> None:
    assert quoted(quote, TEXT)


@pytest.mark.parametrize("quote", [
    "approved in advance by the CEO",  # a word changed
    "requests go in 10 working days",  # a figure rewritten: a quote is the text itself
    "head of department ... approved in advance",  # the parts out of order
    "the ... of",  # fragments any text holds
    "approved … ten working days",  # a one-word part
    "...",
    "\u201c\u201d",  # only quotation marks
])
def test_a_changed_reordered_or_fragmentary_quote_is_not_found(quote: str) -> None:
    assert not quoted(quote, TEXT)


def test_a_huge_quote_of_ellipses_is_answered_at_once() -> None:
    assert not quoted("two words ... " * 50_000, TEXT)
    assert quoted("in advance ... " * 3 + "head of department", "in advance " * 3 + "by the head of department")
