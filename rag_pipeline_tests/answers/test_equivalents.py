"""A fact restated as answers restate it (answers/equivalents.py): ordinals, quarters, thousands
written "k", one length in another unit, numeric dates either way round, the 12- and 24-hour
clock. Each restatement must stand on its passage, and each near miss (another ordinal, quarter,
length, date or time) must still be missing, so that the equivalences never let a wrong figure
through. Real model and database: test_verify.py's `verify` through the CLI on such a passage."""

from __future__ import annotations

import pytest

from rag_pipeline.answers.equivalents import durations, slash_dates
from rag_pipeline.answers.fields import extract, facts, missing


@pytest.mark.parametrize(("claim", "passage"), [
    ("The 2nd edition appeared in 2019.", "The second edition appeared in 2019."),
    ("The 1st and 2nd rounds were cancelled.", "The first and second rounds were cancelled."),
    ("Revenue rose in Q3 2021.", "In the third quarter of 2021, revenue rose."),
    ("Revenue rose in Q2.", "Revenue rose in the second fiscal quarter."),
    ("Revenue rose in Q2.", "Revenue rose in 2Q."),
    ("About 12k users joined.", "About 12,000 users joined."),
    ("About 12.5k users joined.", "About 12,500 users joined."),
    ("The fee is $12k.", "The fee is $12,000."),
    ("The limit is two weeks.", "The limit is 14 days."),
    ("The limit is 14 days.", "The limit is two weeks."),
    ("The meeting lasts 90 minutes.", "The meeting lasts 1.5 hours."),
    ("The timeout is 2 hours.", "The timeout is 120 minutes."),
    ("The contract runs 24 months.", "The contract runs two years."),
    ("The contract runs 18 months.", "The contract runs 1.5 years."),
    ("It took effect on 3 March 2021.", "It took effect on 3/3/2021."),
    ("It took effect on 3 April 2021.", "It took effect on 3/4/2021."),  # day first
    ("It took effect on 4 March 2021.", "It took effect on 3/4/2021."),  # month first
    ("It took effect on 25 March 2021.", "It took effect on 3/25/2021."),
    ("The deadline is 5 p.m.", "The deadline is 17:00."),
    ("The deadline is 17:00.", "The deadline is 5 p.m."),
    ("The deadline is 17:30.", "The deadline is 5:30 pm."),
])
def test_a_restated_fact_stands_on_its_passage(claim: str, passage: str) -> None:
    assert extract(claim), claim
    assert missing(claim, extract(claim), facts(passage)) == []


@pytest.mark.parametrize(("claim", "passage", "absent"), [
    ("The 2nd edition appeared.", "The third edition appeared.", "2"),
    ("Revenue rose in Q3 2021.", "In the fourth quarter of 2021, revenue rose.", "q3"),
    ("About 12k users joined.", "About 1,200 users joined.", "12000"),
    ("The limit is 2 weeks.", "The limit is 7 days.", "2 week"),
    ("The limit is 2 weeks.", "The limit is 14 working days.", "2 week"),  # working days never convert
    ("The limit is 10 working days.", "The limit is two weeks.", "10 working day"),
    ("The contract runs 2 years.", "The contract runs 18 months.", "2 year"),
    ("The timeout is 3 hours.", "The timeout is 120 minutes.", "3 hour"),
    ("It took effect on 5 April 2021.", "It took effect on 3/4/2021.", "2021-04-05"),
    ("It took effect on 26 March 2021.", "It took effect on 25/3/2021.", "2021-03-26"),
    ("The deadline is 5 p.m.", "The deadline is 15:00.", "5"),
    ("The deadline is 17:30.", "The deadline is 5:15 pm.", "30"),
])
def test_a_near_miss_is_still_missing(claim: str, passage: str, absent: str) -> None:
    assert [f.key for f in missing(claim, extract(claim), facts(passage))] == [absent]


def test_an_ordinal_is_a_number_and_not_an_identifier() -> None:
    assert [(f.kind, f.key) for f in extract("The 21st session opened.")] == [("number", "21")]
    assert [(f.kind, f.key) for f in extract("Model X5 and form 10-K.")] == [("identifier", "x5"), ("identifier", "10-k")]


def test_only_whole_or_half_lengths_convert_and_impossible_dates_are_none() -> None:
    assert durations("2", "week") == {("14", "day")}
    assert durations("90", "minute") == {("1.5", "hour"), ("5400", "second")}
    assert durations("10", "day") == set()  # 10/7 weeks is no one's way of saying it
    assert durations("3", "fortnight") == set()
    assert slash_dates("on 13/13/2021, 12/25/2021 or 1/2/2021") == {"2021-12-25", "2021-01-02", "2021-02-01"}


def test_a_huge_passage_of_date_and_clock_noise_is_read_whole() -> None:
    """200,000 characters of clock- and date-like noise: every reading found, none invented."""
    noisy = "1/1/2021 12:00 p.m. 3rd quarter 12k " * 6000
    found = facts(noisy)
    assert "2021-01-01" in {k for kind, k in found.keys if kind == "date"}
    assert {"12", "0", "3", "12000"} <= found.values
