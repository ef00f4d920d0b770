"""How often, numeric dates with a hyphen, and figures in prose table cells, as the exact-field rule
reads them (answers/frequencies.py, equivalents.py, fields.py): each restatement stands on its
passage, each near miss (another frequency, date or figure) is missing. Found as wrong claims that
passed and right ones that were refused on a held-out set of real passages (issue 24)."""

from __future__ import annotations

import time

import pytest

from rag_pipeline.answers.fields import extract, facts, missing
from rag_pipeline.answers.frequencies import stated_by_claim, stated_by_passage


def _missing(claim: str, passage: str) -> list[str]:
    return [field.describe() for field in missing(claim, extract(claim), facts(passage))]


@pytest.mark.parametrize(("claim", "passage"), [
    ("BMFOL sends these transactions to BMF weekly.", "BMFOL sends these transactions to BMF weekly."),
    ("Backups run daily.", "Backups run every day at 02:00."),
    ("Backups run every day.", "Backups are run daily."),
    ("The allowance is EUR 30 per day.", "The allowance is EUR 30 a day."),
    ("The fee is charged annually.", "The fee is EUR 50 per annum."),
    ("Statements are issued every quarter.", "Statements are issued quarterly."),
    ("Reports are sent monthly.", "Die Berichte werden monatlich versandt."),
    ("Reports are sent monthly.", "Les rapports sont mensuels."),
    ("The team meets each business day.", "The team meets daily."),
    ("The annual report appears in March.", "The report appears in March."),  # "annual" names a thing
    ("It took effect on 17 January 2023.", "Effective Date (01-17-2023)"),
    ("It is dated 3 April 2021.", "dated 04-03-2021"),
    ("Codes must be quoted, for example \"200\".",
     "| Field | Description |\n| --- | --- |\n| HTTP Status Code | This field MUST be enclosed in quotation marks "
     "(for example, \"200\") for compatibility between JSON and YAML. |"),
    ("2XX covers the response codes 200 to 299.",
     "| Field | Description |\n| --- | --- |\n| Status Code | For example, 2XX represents all response codes "
     "between [200-299] . |"),
])
def test_a_field_written_another_way_is_stated(claim: str, passage: str) -> None:
    assert _missing(claim, passage) == []


@pytest.mark.parametrize(("claim", "passage", "absent"), [
    ("BMFOL sends these transactions to BMF daily.", "BMFOL sends these transactions to BMF weekly.", "frequency 'daily'"),
    ("Backups run weekly.", "Backups run every day.", "frequency 'weekly'"),
    ("Statements are issued monthly.", "Statements are issued quarterly.", "frequency 'monthly'"),
    ("The fee is charged every month.", "The fee is charged annually.", "frequency 'every month'"),
    ("It took effect on 17 January 2023.", "Code 12-17-2023-4 applies.", "date '17 january 2023'"),
    ("It took effect on 18 January 2023.", "Effective Date (01-17-2023)", "date '18 january 2023'"),
    # a short cell still needs its column: 430 is the employees, not the notices
    ("Chevron sent 430 notices.", "| Company | Employees |\n| --- | --- |\n| Chevron | 430 |", "number '430'"),
    ("2XX covers the response codes 200 to 399.",
     "| Field | Description |\n| --- | --- |\n| Status Code | For example, 2XX represents all response codes "
     "between [200-299] . |", "number '399'"),
])
def test_a_near_miss_is_still_missing(claim: str, passage: str, absent: str) -> None:
    assert _missing(claim, passage) == [absent]


def test_a_claim_states_only_the_strict_forms_and_a_passage_every_form() -> None:
    assert stated_by_claim("in a day, the annual report") == {}
    assert stated_by_passage("in a day, the annual report") == {"day", "year"}
    assert stated_by_claim("paid weekly, checked every calendar month, once a year") == {
        "week": "weekly", "month": "every calendar month", "year": "once a year"}


@pytest.mark.parametrize("text", [
    "daily weekly " * 200_000,
    "every " * 300_000 + "day",
    "01-17-2023-" * 100_000,
    "| " + "word " * 300_000 + "200 |",
])
def test_huge_and_hostile_text_is_read_in_one_pass(text: str) -> None:
    started = time.process_time()
    found = facts(text)
    extract(text[:100_000])
    assert isinstance(found.keys, frozenset)
    assert time.process_time() - started < 60  # linear: a second or so; a quadratic scan takes hours
