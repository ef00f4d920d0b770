"""A claim's list against the passage's (answers/enumerations.py): an item swapped for a
neighbour ("query, header or body" where the passage says "query, header or cookie") or taken
from another list of the passage ("Side Bets include ... Three Card Poker", a Premium Game) is
reported by name; a faithful list in another order, with articles, plurals, trade marks or a
shortened first or last item stands; lists the passage does not share (gathered from several
sentences), clauses, numbers with thousands separators and hostile text decide nothing. The last
test verifies such a claim through the CLI on a real index with the real model."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from helpers import ANOTHER_DOCUMENT, sync_folder, verify_claims

from rag_pipeline.answers.enumerations import foreign_items

API_KEY = ('in | string | REQUIRED. The location of the API key. Valid values are "query", "header" or "cookie".')
GALAXY = ("Side Bets are wagering options added to games such as baccarat, pai gow poker, craps and blackjack. "
          "Examples of our Side Bets include 21+3®, Lucky Ladies® and Bonus Craps™. Premium Games are stand-alone "
          "games. Examples of our Premium Games include Heads Up Hold ’em®, High Card Flush®, Cajun Stud® and "
          "Three Card Poker®.")
CORE = "The Framework Core consists of five concurrent and continuous Functions—Identify, Protect, Detect, Respond, Recover."
ELEMENTS = "The Framework Core consists of four types of elements: Functions, Categories, Subcategories, and Informative References."


@pytest.mark.parametrize(("claim", "passage", "foreign"), [
    ("The API key's location has the valid values query, header or body.", API_KEY, ["body"]),
    ("Galaxy's Side Bets include 21+3, Lucky Ladies and Three Card Poker.", GALAXY, ["Three Card Poker"]),
    ("The Core is made up of Functions, Categories, Implementation Tiers and Informative References.", ELEMENTS,
     ["Implementation Tiers"]),
    ("Premium Games include Cajun Stud, Bonus Craps, High Card Flush and Heads Up Hold 'em.", GALAXY, ["Bonus Craps"]),
])
def test_an_item_the_passages_list_leaves_out_is_named(claim: str, passage: str, foreign: list[str]) -> None:
    found = foreign_items(claim, passage)
    assert [f.item for f in found] == foreign
    assert all(f.item in f.describe() and f.passage_list in f.describe() for f in found)


@pytest.mark.parametrize(("claim", "passage"), [
    ("Valid values for the key's location are cookie, query and header.", API_KEY),  # another order, "and"
    ("Our Side Bets include the 21+3, Lucky Ladies and Bonus Craps wagers.", GALAXY),  # article, trade marks, a longer last item
    ("Side Bets are added to baccarat, craps and blackjack table games.", GALAXY),  # a part of the list
    ("The four element types are Functions, Categories, Subcategories and Informative References.", ELEMENTS),
    # the claim's first "item" is no item: never reported
    ("The Core is made up of four elements, Functions, Categories and Subcategories.", ELEMENTS),
    # a list the passage does not have: gathered from several sentences, left to the other checks
    ("Identify, Protect and Recover are Functions of the Core.", "Identify is a Function. So are Protect and Recover."),
    # clauses, not items
    ("It relies on standards developed, managed and updated by industry, so that the tools and methods scale.",
     "It builds on standards, guidelines, and practices developed, managed, and updated by industry, the tools and "
     "methods available to achieve positive outcomes."),
    # thousands separators are not list commas
    ("The penalty applies to returns of 50,000 or more.", "The penalty applies to returns of 5,000 or more."),
    ("", API_KEY),
    (API_KEY, ""),
])
def test_a_faithful_list_or_no_shared_list_stands(claim: str, passage: str) -> None:
    assert foreign_items(claim, passage) == []


@pytest.mark.parametrize("text", [
    "alpha, " * 20_000,  # commas without a final "and": the pattern once rescanned the rest from every position
    "alpha beta gamma delta, " * 5_000,
    "x, y and z, " * 10_000,
    "a," * 50_000,
    "C++ " * 30_000 + ", a and b",
    "\u0000, \u202e, \ufeff and \U0001f600",
])
def test_hostile_text_is_read_in_linear_time(text: str) -> None:
    """Each of these took minutes before the item count was bounded (140 kB of "alpha, ": 365 s);
    bounded, each reads in about a second or less here: the limit is far above that."""
    started = time.perf_counter()
    foreign_items(text, text)
    assert time.perf_counter() - started < 60


def test_verify_names_the_item_through_the_cli(capsys: pytest.CaptureFixture[str], tmp_path: Path, db_url: str) -> None:
    """On a real index, through `verify`: the faithful list is supported, the one with a swapped
    item is unsupported with the item named, though every word of it is in the passage."""
    config = sync_folder(capsys, tmp_path, db_url, {
        "openapi.md": "# Security Scheme Object\n\n## Fixed Fields\n\nThe apiKey scheme sends an API key and needs its name and location. "
                      "The name is the name of the header, query or cookie parameter to be used. Valid values for "
                      "the location are query, header or cookie. A request body never carries the key.\n"}
        | ANOTHER_DOCUMENT)
    results = verify_claims(capsys, config, db_url, "Where can an API key be sent?", "openapi.md", {
        last: f"The valid values for the location of an API key are query, header or {last}." for last in ("cookie", "body")})
    assert results["cookie"]["status"] == "supported", results["cookie"]
    assert results["body"]["status"] == "unsupported", results["body"]
    assert "'body' is not among the items" in results["body"]["citations"][0]["reason"]
