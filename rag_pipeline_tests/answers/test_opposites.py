"""A claim that says the opposite word of its passage ("temporary" on a row saying "Permanent") is a
difference in polarity, as a dropped "not" is; a negated opposite agrees (issue 24: such claims
passed a held-out set, every other word shared and no figure changed). Unit cases, hostile text and
a real sync judged through `verify`."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import sync_folder

from rag_pipeline.answers import support
from rag_pipeline.answers.draft import Citation, Claim, Draft
from rag_pipeline.answers.opposites import opposed
from rag_pipeline.answers.polarity import mismatch
from rag_pipeline.answers.verify import verify
from rag_pipeline.retrieval.search import search
from rag_pipeline.store import database

ROW = "| 08/12/2015 | 10/12/2015 | 08/13/2015 | Chevron | San Ramon | 430 | Layoff Permanent |"


@pytest.mark.parametrize(("claim", "sentence"), [
    ("Chevron's San Ramon layoffs are temporary.", ROW),
    ("Encryption of backups is optional.", "Encryption of backups is mandatory."),
    ("Revenue increased in 2021.", "Revenue decreased in 2021."),
    ("The request was approved by the board.", "The request was rejected by the board."),
    ("Cash advances are allowed.", "Cash advances are prohibited."),
    ("Das Arbeitsverhältnis ist befristet.", "Das Arbeitsverhältnis ist unbefristet."),
    ("La participation est obligatoire.", "La participation est facultative."),
    ("MCAS activates in manual flight with the flaps extended.", "MCAS activates in manual flight with the flaps retracted."),
    ("Version 2 added the export command.", "Version 2 removed the export command."),
    ("Its competitors, all of which are larger than Galaxy, include Play AGS.",
     "Most of these competitors are larger than we are."),  # heldout6: a rule's reach widened
    ("With RCAC the implementation is simpler.", "The implementation of the SQL statement is more complex with RCAC."),
    ("Reviews always take place in March.", "Reviews usually take place in March."),
])
def test_the_opposite_word_in_the_sentence_is_a_mismatch(claim: str, sentence: str) -> None:
    assert opposed(sentence, claim) and mismatch(claim, [sentence])


@pytest.mark.parametrize(("claim", "sentence"), [
    ("Chevron's San Ramon layoffs are permanent.", ROW),  # the same word
    ("The layoffs are not temporary.", ROW),  # a negated opposite agrees
    ("Staff numbers were reduced.", "Staff numbers did not increase."),
    ("The minimum is 5 and the maximum is 10.", "The minimum is 5 and the maximum is 10."),
    ("The minimum is 5 and the maximum 10.", "The minimum is 5."),  # both words of a pair in the claim
    ("Prices increased after a decrease.", "Prices decreased, then increased."),  # both in the sentence
    ("Access is permitted for internal auditors.", "Access is permitted for internal auditors, not external ones."),
    ("All members may vote.", "All members may vote; most do."),  # the claim's own word is there
    ("Most members voted.", "Most members voted, and some abstained."),
])
def test_the_same_word_a_negated_opposite_or_both_words_are_no_mismatch(claim: str, sentence: str) -> None:
    assert not mismatch(claim, [sentence])


def test_a_claim_that_negates_is_confirmed_by_the_opposite_word() -> None:
    assert not mismatch("Backups are not optional.", ["Backups are mandatory."])
    assert mismatch("Backups are not mandatory.", ["Backups are mandatory."])


@pytest.mark.parametrize("sentence", [
    "temporary permanent " * 200_000,
    "increase" * 100_000,
    "-" * 500_000 + "permanent",
    "",
])
def test_hostile_sentences_are_judged(sentence: str) -> None:
    """Megabytes of opposite words, one endless word, dashes: one pass over the words each."""
    assert isinstance(opposed(sentence, "The layoffs are temporary."), bool)
    assert opposed("permanent " * 3, "temporary") is True  # the same word repeated counts once


REPORT = """# WARN report, August 2015

| Notice date | Company | City | Employees | Layoff/Closure |
| --- | --- | --- | --- | --- |
| 08/04/2015 | CGR/Thompson Industries | Fullerton | 102 | Closure Permanent |
| 08/10/2015 | BI Nutraceuticals | Long Beach | 54 | Layoff Temporary |
| 08/12/2015 | Chevron | San Ramon | 430 | Layoff Permanent |
"""


@pytest.fixture
def synced(tmp_path: Path, db_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    sync_folder(capsys, tmp_path, db_url, {"warn-august-2015.md": REPORT})
    return db_url


def test_a_claim_with_the_opposite_word_of_its_row_is_flagged(synced: str, embedder) -> None:
    claims = ["Chevron's layoffs in San Ramon are temporary.", "Chevron's layoffs in San Ramon are permanent.",
              "The layoffs at BI Nutraceuticals in Long Beach are temporary."]
    with database.connect(synced) as conn:
        hits = search(conn, embedder, "Are the Chevron layoffs in San Ramon permanent?", ["all-staff"], k=5, user="lib")
        draft = Draft(hits.log_id, tuple(Claim(text, (Citation(hits[0].chunk_id),)) for text in claims))
        found = verify(conn, embedder, draft, user="lib", record=False, threshold=support.DEFAULT)
    assert [c.citations[0].score["polarity_flag"] for c in found.claims] == [1, 0, 0]
    assert "differ in negation" in found.claims[0].citations[0].reason


def test_a_table_row_is_read_alone_not_with_the_rows_around_it() -> None:
    """Rows end with "|", not a full stop: they were completed as wrapped lines with the two rows
    above, whose "Temporary" then hid the Chevron row's "Permanent"."""
    found = support.sentences(REPORT)
    chevron = next(i for i, s in enumerate(found) if "Chevron" in s)
    assert support._flag("Chevron's layoffs in San Ramon are temporary.", found, [chevron], {"language": "en"}) == 1.0
