"""The figure-role check (roles.py) on layouts where a figure's words are not beside it in the
same sentence: a summary page's key figures each alone on a line under or over its label, a
fraction written with the fraction slash PDFs use ("3⁄8"), and a reference word's full stop
("No. 8") that a splitter took for a sentence end. Each had a faithful claim flagged as a figure
in another role (issue 24); a figure that is in another role must still be caught."""

from __future__ import annotations

import pytest

from rag_pipeline.answers.claim_sentences import rejoined
from rag_pipeline.answers.fields import extract, facts, missing
from rag_pipeline.answers.roles import misplaced
from rag_pipeline.answers.support import sentences

# a report's "at a glance" page as PyMuPDF reads it: each key figure alone on its line
GLANCE = ("FISCAL 2023 AT A GLANCE\n\nREVENUE\n\nEUR 4,812 million\n\nWORKFORCE\n\n18,240\n\nEmployees worldwide\n\n"
          "SITES\n\n37\n\nProduction plants\n\nNote: All figures as of December 31, 2023\n\nContents\n\n"
          "2 Letter from the Board\n\n14 Employees and society")
NUTS = ("Boots self-locking nuts range from No. 6 up to 1\u20444 inch, the Rol-top ranges from 1\u20444 inch to "
        "1\u20446 inch, and the bellows type ranges in size from No. 8 up to 3\u20448 inch. Wing-type nuts are made "
        "of anodized aluminum alloy.")


@pytest.mark.parametrize("claim", [
    "The company had 18,240 employees worldwide at the end of 2023.",
    "It operated 37 production plants.",
])
def test_a_key_figure_alone_on_its_line_takes_the_words_of_the_lines_around_it(claim: str) -> None:
    assert misplaced(claim, GLANCE) == []


@pytest.mark.parametrize(("claim", "figure", "rival"), [
    ("The company had 37 employees worldwide.", "37", "18240"),
    ("It operated 18,240 production plants.", "18240", "37"),
])
def test_a_key_figure_given_to_another_label_is_still_misplaced(claim: str, figure: str, rival: str) -> None:
    assert [(m.figure, m.rival) for m in misplaced(claim, GLANCE)] == [(figure, rival)]


def test_a_fraction_slash_reads_as_a_slash() -> None:
    claim = "The bellows type ranges in size from No. 8 up to 3/8 inch."
    assert missing(claim, extract(claim), facts(NUTS)) == []
    assert misplaced(claim, NUTS) == []
    half = "A \u00bd inch washer is used."  # NFKC writes the vulgar fraction as 1, fraction slash, 2
    assert missing("A 1/2 inch washer is used.", extract("A 1/2 inch washer is used."), facts(half)) == []


def test_a_reference_word_before_its_number_ends_no_sentence() -> None:
    assert "the bellows type ranges in size from No. 8 up to 3\u20448 inch." in sentences(NUTS)[0]
    assert [(m.figure, m.rival) for m in misplaced("The bellows type ranges in size from No. 6 up to 3/8 inch.", NUTS)] \
        == [("6", "8")]
    assert rejoined(["See Fig.", "2 for the layout.", "It was built in 2019.", "5 people use it.", "No.", "Never."]) \
        == ["See Fig. 2 for the layout.", "It was built in 2019.", "5 people use it.", "No.", "Never."]


def test_hostile_layouts_are_judged() -> None:
    """A passage of 20,000 lone figures, and a chain of 100,000 "No." splits: each judged once,
    the chain joined in one pass."""
    lone = "\n".join(str(i) for i in range(20000))
    assert misplaced("It has 5 plants and 7 sites.", lone) == []
    chain = rejoined(["No."] + ["1 No."] * 100000)
    assert len(chain) == 1 and chain[0].count("No.") == 100001


def test_each_figure_of_a_claim_is_read_with_its_own_words() -> None:
    """The words beside a claim's figure say what it is the figure of, not every word of the claim:
    "the two AOA sensors" in a claim that goes on about a threshold and the flight had been given
    to the footnote mark "10" after "flight control laws" (the Federal Register AD of the shared
    corpus, as indexed: footnote marks stay). A figure given to another subject is still caught."""
    ad = ("To ensure that an erroneous signal from a failed single AOA sensor does not prevent continued safe flight "
          "and landing, the FAA proposes to require installation of updated FCC software with revised flight "
          "control laws 10 associated with MCAS. The updated FCC software would also compare the inputs from the "
          "two sensors to detect a failed AOA sensor. If the difference between the AOA sensor inputs is above a "
          "calculated threshold,11 the FCC would disable the speed trim system (STS), including its MCAS function, "
          "for the remainder of that flight.")
    claim = ("The updated FCC software compares the inputs of the two AOA sensors and, if their difference is above a "
             "calculated threshold, disables the speed trim system, including MCAS, for the remainder of that flight.")
    assert misplaced(claim, ad) == []
    found = misplaced("The FCC software compares the inputs of 10 AOA sensors.", ad)
    assert [(m.figure, m.rival) for m in found] == [("10", "2")]


@pytest.mark.parametrize(("claim", "passage", "misplaced_figures"), [
    # the title or volume of a legal citation names a code: no figure of the part numbered beside it
    ("Part 1 gives 5 U.S.C. 3301 and 3302 as its authority.",
     "AUTHORITY: 5 U.S.C, 3301, 3302.\n\nSOURCE: 28 FR 10022, Sept. 14, 1963.\n\n$1.1 Positions and employees affected by the rules.", []),
    ("Its source is 28 FR 10022.", "SOURCE: 28 FR 10022. The rule has 7 parts.", []),
    # a figure that is no citation's volume is still read in its role
    ("The fund pays 28 nurses.", "SOURCE: 28 FR 10022.\n\nThe fund pays 7 nurses.\n\nThe school has 28 teachers.", ["28"]),
    # "U.S." after a count, with no section number after it, is no citation
    ("The fund pays 28 U.S. nurses.", "The fund pays 7 U.S. nurses.\n\nThe school has 28 teachers.", ["28"]),
])
def test_a_legal_citations_volume_is_no_figure_in_a_role(claim: str, passage: str, misplaced_figures: list[str]) -> None:
    assert [m.figure for m in misplaced(claim, passage)] == misplaced_figures
