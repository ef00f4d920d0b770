"""A negation the claim's best sentence does not hold: in the next sentence ("This is no longer the
case"), or in the sentence sharing the claim's words that the model ranks below another (issue 24:
wrong claims of both kinds passed held-out cases). Unit cases on the rule, hostile sentences, and
real syncs judged through `verify` with the real model and PostgreSQL."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from helpers import sync_folder

from rag_pipeline.answers import support
from rag_pipeline.answers.denials import looks_back, remainder
from rag_pipeline.answers.draft import Citation, Claim, Draft
from rag_pipeline.answers.polarity import Reading, mismatch
from rag_pipeline.answers.verify import verify
from rag_pipeline.retrieval.search import search
from rag_pipeline.store import database

# The weights calibrate-support fitted on evalsets/answers/corpus_answers.yaml (bench/README.md): the
# built-in default's polarity weight (0.5) leaves a near-verbatim claim above its bar when flagged
CALIBRATED = support.Threshold(0.972, "corpus_answers.yaml's calibration", coverage_weight=0.9, polarity_weight=1.0)
LOBBYING = "In the past it was possible to advocate successfully in the legislature through lobbying."


@pytest.mark.parametrize(("sentence", "left"), [
    ("This is no longer the case since politics has become a pay to play game.",
     "since politics has become a pay to play game"),
    ("However, this isn't true any more.", "any more"),
    ("That is no longer possible.", ""),
    ("Unfortunately this has not been the case since 2019.", "since 2019"),
    ("This no longer applies.", ""),
    ("No longer.", ""),
    ("Das ist heute nicht mehr der Fall.", ""),
    ("Dies gilt nicht mehr, seit das Gesetz geändert wurde.", "seit das gesetz geändert wurde"),
    ("Ce n'est plus le cas depuis 2020.", "depuis 2020"),
    ("Cela n'est plus vrai.", ""),
    ("To už neplatí.", ""),
    ("Tak tomu již není, protože zákon se změnil.", "protože zákon se změnil"),
])
def test_a_denial_by_reference_is_read_with_what_follows_its_phrase(sentence: str, left: str) -> None:
    assert remainder(sentence) == left


@pytest.mark.parametrize("sentence", [
    "This does not apply to contractors.",  # restricts the rule before it, denies nothing
    "That is not true for part-time staff.",
    "It is not possible to book business class.",  # a negation of its own words
    "It is not the case that staff may travel first class.",
    "Das gilt nicht für Kinder unter 14 Jahren.",
    "Ce n'est pas le cas pour les stagiaires.",
    "This policy is no longer the case study we use.",  # a subject with words of its own
    "The rule is no longer valid.",
    "",
])
def test_a_sentence_that_negates_its_own_words_or_restricts_is_no_denial(sentence: str) -> None:
    assert remainder(sentence) is None


def test_a_denied_sentence_contradicts_a_claim_that_affirms_it_unless_the_claim_looks_back() -> None:
    denied = Reading(LOBBYING, denied=True)
    assert mismatch("SUAA can still advocate successfully in the legislature through lobbying.", [denied])
    assert not mismatch("SUAA can no longer advocate successfully through lobbying.", [denied])
    assert not mismatch("In the past, SUAA could advocate successfully through lobbying.", [denied])
    assert looks_back("Früher war das möglich.") and not looks_back("Lobbying works.")
    # a denied negation affirms: "Cash was not accepted. This is no longer the case."
    assert mismatch("Cash is not accepted.", [Reading("Cash was not accepted.", denied=True)])
    assert not mismatch("Cash is accepted.", [Reading("Cash was not accepted.", denied=True)])
    # the same sentence not denied says what it says
    assert not mismatch("SUAA could advocate successfully through lobbying.", [LOBBYING])


def test_the_sentence_sharing_most_of_the_claims_words_is_read_beside_the_best_ranked() -> None:
    ranked = ["Businesses must make a serious effort to secure their data.", "Data breaches cost money."]
    closest = "Data security is no longer an option;"
    assert not mismatch("Data security is an option for businesses.", ranked)
    assert mismatch("Data security is an option for businesses.", ranked, [closest])
    # a claim that negates finds its negation in the closest sentence too
    assert mismatch("Data security is no longer an option.", ranked)
    assert not mismatch("Data security is no longer an option.", ranked, [closest])
    # the closest sentence affirming changes nothing for a claim that affirms
    assert not mismatch("Data security is a requirement.", ranked, ["Data security is a requirement."])


def test_the_flag_reads_the_sentence_after_the_best_one_and_the_one_sharing_most_words() -> None:
    """support._flag, as verify calls it: sentences in chunk order, the best ranked first, the
    candidates in order of words shared with the claim."""
    english = {"language": "en"}
    found = [LOBBYING, "This is no longer the case since politics has become a pay to play game.", "Dues are $20."]
    assert support._flag("SUAA can still advocate successfully through lobbying.", found, [0, 2], english) == 1.0
    # the denial ranked first is read by its own words, which it does not negate
    assert support._flag("Politics has become a pay to play game.", found, [1, 0], english) == 0.0
    # a denial denies the sentence right before it, not one further back
    assert support._flag("Dues are $20.", [*found[1:], "That is no longer true."], [1], english) == 1.0
    assert support._flag("Dues are $20.", found, [2], english) == 0.0
    assert support._flag("SUAA can still advocate successfully through lobbying.", [LOBBYING, "Dues are $20.",
                         "That is no longer true."], [0], english) == 0.0
    data = ["Businesses must make a serious effort to secure their data.", "Data security is no longer an option;"]
    # ranked second, the sentence sharing 3 of the claim's words (not 2) is read too
    assert support._flag("Data security is an option for businesses.", data, [0, 1], english) == 1.0
    # equal shares: the best ranked decides
    assert support._flag("Data security is an option.", ["Data is an option.", "Security is no longer an option;"],
                         [0, 1], english) == 0.0
    # a claim that negates in one of its clauses: the sentence closest to that clause says it,
    # though neither of the two best for the whole claim does
    error = ["CFOL007-RECOVERABLE RETENTION REGISTER PROBLEM.", "The module cannot be obtained.",
             "User should utilize microfilm for research."]
    claim = "CFOL007 signals a recoverable retention register problem; the module cannot be obtained, so use microfilm."
    assert support._flag(claim, error, [0, 2], english) == 0.0
    assert support._flag(claim, [error[0], "The module can be obtained.", error[2]], [0, 2], english) == 1.0


@pytest.mark.parametrize("sentence", [
    "this is not " * 200_000,
    "This is no longer the case " + "since " * 500_000,
    "(" * 300_000 + "this is no longer the case",
    "no longer " * 300_000,
    "\u00ad" * 500_000 + "This is no longer the case.",
])
def test_hostile_sentences_are_read_in_bounded_time(sentence: str) -> None:
    """A denial opens its sentence: only its first 200 characters are matched, however long the
    sentence (chunks hold sentences of at most 1,000 characters; these are megabytes)."""
    started = time.process_time()
    for _ in range(3):
        remainder(sentence)
    assert time.process_time() - started < 30  # a quadratic match of megabytes takes hours
    assert isinstance(mismatch("It is the case.", [Reading(sentence[:5000], denied=True)]), bool)


HANDBOOK = """# Fleet and devices

## Company cars

In the past, requests for a company car could be approved by the team lead. This is no longer
the case since the fleet moved to the finance department. Requests now go to the fleet office,
which answers within five working days.

## Laptops

Recent news headlines are filled with reports of stolen laptops and the data lost with them.
Employees must make a serious effort to secure their devices and recognise that securing them is
a cost of doing their work. Device security is no longer an option; it is a requirement.
"""


@pytest.fixture
def synced(tmp_path: Path, db_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    sync_folder(capsys, tmp_path, db_url, {"fleet-and-devices.md": HANDBOOK})
    return db_url


def _judged(url: str, embedder, question: str, claims: list[str]) -> list[tuple[str, float]]:
    """Each claim citing the chunk of the search's results that holds the claim's subject, judged
    (not recorded) at the corpus set's calibration: (claim status, polarity flag)."""
    with database.connect(url) as conn:
        hits = search(conn, embedder, question, ["all-staff"], k=5, user="lib")
        cited = hits[0].chunk_id
        draft = Draft(hits.log_id, tuple(Claim(text, (Citation(cited),)) for text in claims))
        found = verify(conn, embedder, draft, user="lib", record=False, threshold=CALIBRATED)
    return [(claim.status, claim.citations[0].score["polarity_flag"]) for claim in found.claims]


def test_a_claim_denied_by_the_next_sentence_is_flagged_and_its_restatements_pass(synced: str, embedder) -> None:
    assert _judged(synced, embedder, "Can the team lead approve a company car request?", [
        "The team lead can still approve requests for a company car.",
        "Team leads can no longer approve requests for a company car.",
        "In the past, the team lead could approve company car requests.",
        "Requests for a company car now go to the fleet office."]) == [
        ("unsupported", 1), ("supported", 0), ("supported", 0), ("supported", 0)]


def test_a_negation_in_the_sentence_sharing_the_claims_words_is_flagged(synced: str, embedder) -> None:
    """The model ranks "Employees must make a serious effort to secure their devices ..." above
    "Device security is no longer an option;" for the first claim (0.80 against 0.72): only the
    sentence sharing more of its words holds the negation."""
    assert _judged(synced, embedder, "Is device security optional for employees?", [
        "Device security is an option for employees.",
        "Device security is no longer an option.",
        "Employees must make a serious effort to secure their devices."]) == [
        ("unsupported", 1), ("supported", 0), ("supported", 0)]
