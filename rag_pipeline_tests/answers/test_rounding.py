"""Figures as generated answers restate them: rounded after "about" (answers/rounding.py), a month
"of" a year, and a name the chunk's section heading states (fields.py). Each restatement stands on
its passage; each near miss (a figure that does not round to the passage's, an unrounded figure, a
name neither the text nor the heading gives) is still missing."""

from __future__ import annotations

import pytest

from rag_pipeline.answers.fields import extract, facts, missing
from rag_pipeline.answers.rounding import rounds_to

INTEREST = ("Total interest expense was $1,505,386 in 2021 compared to $683,357 in 2020, an increase of "
            "$822,029, or 120.3%.")


def _missing(claim: str, passage: str, heading: str = "") -> list[str]:
    return [f.describe() for f in missing(claim, extract(claim), facts(passage, heading))]


@pytest.mark.parametrize("claim", [
    "Total interest expense rose 120.3% to about $1.5 million in 2021.",
    "Interest expense was roughly 1.5 million dollars in 2021.",
    "Interest expense rose by about 120% in 2021.",
    "In 2020 interest expense was approximately $680,000.",
    "Interest expense grew by nearly $0.8 million.",
])
def test_a_rounded_figure_stands_on_the_value_it_rounds(claim: str) -> None:
    assert _missing(claim, INTEREST) == []


@pytest.mark.parametrize(("claim", "absent"), [
    ("Interest expense was about $1.6 million.", "amount '$1600000'"),  # 1,505,386 rounds to 1.5
    ("Interest expense was $1.5 million.", "amount '$1500000'"),  # no "about": exact
    ("Interest expense rose about 130%.", "percentage '130%'"),
    ("Interest expense was about EUR 1.5 million.", "amount 'eur 1500000'"),  # another currency
])
def test_a_figure_that_does_not_round_to_the_passage_is_missing(claim: str, absent: str) -> None:
    assert _missing(claim, INTEREST) == [absent]


def test_rounding_reads_the_last_significant_digit() -> None:
    assert rounds_to("1500000", ["1549999"]) and not rounds_to("1500000", ["1550001"])
    assert rounds_to("120.3", ["120.34"]) and not rounds_to("120.3", ["120.4"])
    assert not rounds_to("12a", ["12"]) and not rounds_to("5", ["x", ""])


def test_a_month_of_a_year_and_a_name_in_the_heading_are_stated() -> None:
    cache = "Starting in January of 2015 and continuing each January, the cache will roll over."
    assert _missing("Since January 2015 the cache rolls over every January.", cache) == []
    assert _missing("Since February 2015 the cache rolls over.", cache) == ["date 'february 2015'"]
    encoders = "We use two independent BERT networks and take the representation at the [CLS] token, so d = 768."
    claim = "DPR uses two independent BERT encoders with 768 dimensions."
    assert _missing(claim, encoders, "3 Dense Passage Retriever (DPR) / 3.1 Overview") == []
    assert _missing(claim, encoders, "Dense Passage Retrieval / 3.1 Overview") == []  # its initials
    assert _missing(claim, encoders, "4 Experimental Setup") == ["identifier 'DPR'"]


@pytest.mark.parametrize("text", ["about " * 200_000 + "5", "~" * 500_000 + "1.5", "about 1" + "0" * 5000])
def test_hostile_figures_are_read(text: str) -> None:
    assert isinstance(_missing(text[:300_000], INTEREST), list)
