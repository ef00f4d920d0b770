"""The polarity flag reads what a negation negates: a claim restating one clause of a sentence is
not contradicted by a "not" in another (issue 24: faithful claims were flagged for it), while a
claim that takes up the negated clause still is. Sentences from the shared corpus's DOJ handbook,
Federal Register AD, NIST CSF 1.1 and IRS IRM, as the pipeline indexes them."""

from __future__ import annotations

import pytest

from rag_pipeline.answers.polarity import cues, mismatch

FEES = ("The standing trustee should not informally establish a minimum or maximum fee for chapter 13 cases but "
        "should review fees based on the individual character of the case.")
CARD = "Such purchases should not be a routine occurrence and should not exceed $100."
FAA = ("This design standard was promulgated in 2007 and therefore is part of the certification basis of the 737 MAX "
       "but not of previous Boeing Model 737 airplanes.")
COMMENTS = ("Except for Confidential Business Information as described in the following paragraph, and other "
            "information as described in 14 CFR 11.35, the FAA will post all comments received, without change, to "
            "https:// regulations.gov, including any personal information you provide.")
TIERS = ("While organizations identified as Tier 1 (Partial) are encouraged to consider moving toward Tier 2 or "
         "greater, Tiers do not represent maturity levels.")
FORMS = "5 = The 527 political organization has to file a Form 8871 but does not have to file a Form 8872."
ADVERTISE = ("The standing trustee may not advertise in newspapers or other public information media, or take any "
             "other action that could reasonably be interpreted as encouraging debtors to file petitions under "
             "chapter 13 of the Bankruptcy Code.")
ADJOURN = ("To the extent that the debtor does not comply with this requirement, the standing trustee may hold open or "
           "adjourn the meeting of creditors for a reasonable time, not to exceed 120 days, to allow the debtor to "
           "file the unfiled tax returns.")
SCRM = ("Communicating Cybersecurity Requirements (Section 3.3) and Buying Decisions (Section 3.4) address only two "
        "uses of the Framework for cyber SCRM and are not intended to address cyber SCRM comprehensively.")


@pytest.mark.parametrize(("claim", "sentence"), [
    ("The standing trustee should review fees based on the individual character of the case.", FEES),
    ("A standing trustee may use a personal credit card for incidental purchases of goods, which should not "
     "exceed $100.", CARD),
    ("The design standard, promulgated in 2007, is part of the certification basis of the 737 MAX.", FAA),
    ("The FAA will post all comments received to regulations.gov, including any personal information provided.", COMMENTS),
    ("Organizations identified as Tier 1 (Partial) are encouraged to consider moving toward Tier 2 or greater.", TIERS),
    ("Under code 5, the 527 political organization has to file a Form 8871.", FORMS),
    ("The standing trustee may hold open or adjourn the meeting of creditors for a reasonable time, up to 120 days, "
     "to allow the debtor to file the unfiled tax returns.", ADJOURN),
    ("Communicating Cybersecurity Requirements (Section 3.3) and Buying Decisions (Section 3.4) address only two uses "
     "of the Framework for cyber SCRM.", SCRM),
])
def test_a_negation_in_a_clause_the_claim_leaves_out_is_no_mismatch(claim: str, sentence: str) -> None:
    assert cues(sentence) > 0 and cues(claim) == 0
    assert not mismatch(claim, [sentence])


@pytest.mark.parametrize(("claim", "sentence"), [
    ("The standing trustee should informally establish a minimum or maximum fee for chapter 13 cases.", FEES),
    ("Such purchases are a routine occurrence.", CARD),
    ("The design standard is part of the certification basis of previous Boeing Model 737 airplanes.", FAA),
    ("Tiers represent maturity levels.", TIERS),
    ("Under code 5, the 527 political organization has to file a Form 8872.", FORMS),  # the figure of the negated clause
    # the negated verb is the claim's, however long the rest of the clause
    ("A chapter 13 standing trustee may advertise in newspapers to encourage debtors to file under chapter 13.", ADVERTISE),
    ("Sections 3.3 and 3.4 are intended to address cyber SCRM comprehensively.", SCRM),
    # a determiner before the head: "no other" negates "access rights"
    ("Contractors get a visitor badge and full access rights.", "Contractors get a visitor badge, but no other access rights."),
    # another word for the negated one: the claim's words are those of the negated clause
    ("Cash advances on the card are allowed.", "Cash advances on the card are not permitted."),
])
def test_a_claim_that_takes_up_the_negated_clause_is_a_mismatch(claim: str, sentence: str) -> None:
    assert mismatch(claim, [sentence])


def test_a_denied_rule_is_not_confirmed_by_a_negation_in_its_condition() -> None:
    assert mismatch("The standing trustee may not adjourn the meeting of creditors to allow the debtor to file unfiled "
                    "tax returns.", [ADJOURN])
    assert not mismatch("The standing trustee may not advertise in newspapers.", [ADVERTISE])
    # a negated claim joining two sentences: the negation it takes up sits in the second
    assert not mismatch("A card may be used for purchases, which should never be routine.",
                        ["The trustee may use a card for purchases.", "Such purchases should never be routine."])


def test_a_cue_of_another_language_counts_wherever_it_stands() -> None:
    """German puts "nicht" after what it negates and Czech negates inside the verb: their scope is
    not read, every such cue counts, as before the clause rule."""
    assert mismatch("Der Antrag wird bearbeitet, und die Gebühr wird erstattet.",
                    ["Der Antrag wird bearbeitet, die Gebühr wird aber nicht erstattet."])
    assert mismatch("Der Treuhänder kennt den Schuldner.", ["Den Schuldner kennt der Treuhänder nicht."])
    assert mismatch("Soud uloží trest.", ["Soud neuloží trest, pokud pachatel spolupracuje."])


def test_a_bound_keeps_its_words_and_a_number_sign_its_figure() -> None:
    """"should not exceed $100" is no negation but says "exceed $100": the clause a claim restating
    the cap shares its words with; "Law No. 270" keeps its 270."""
    assert cues("Purchases should not exceed $100 and Law No. 270 applies.") == 0
    assert not mismatch("Purchases may be made up to the cap; they should not exceed $100.", [CARD])


@pytest.mark.parametrize(("sentence", "negates"), [
    (" ".join(["not"] * 20000), True),
    ("not " + "x " * 50000 + "and not y", True),
    (", ".join(f"not w{i}" for i in range(5000)), True),
    ("(" * 10000 + "not" + ")" * 10000, True),
    ("", False),
])
def test_hostile_sentences_are_judged(sentence: str, negates: bool) -> None:
    """Huge runs of cues, clause marks and words: every cue reads at most SCOPE words, every
    clause is read once, so each finishes (no quadratic walk), and is judged by the rule: a
    sentence that negates what the claim shares with it (or shares nothing: ties count) denies
    the affirming claim and confirms the negated one; an empty one does the reverse."""
    assert mismatch("w1 x y are allowed.", [sentence]) is negates
    assert mismatch("w1 is not allowed.", [sentence]) is not negates


def test_a_negated_word_is_taken_up_in_another_inflection() -> None:
    """"must not specify" restates "MUST NOT be specified" (OpenAPI 3.1.0's Header Object); the
    scope's head was compared as written, so the claim's own negation found no match and was
    flagged, while dropping it went unseen in the same way."""
    header = "in MUST NOT be specified, it is implicitly in header."
    assert not mismatch("A Header Object must not specify the in field, since its location is implicitly the header.",
                        [header])
    assert mismatch("A Header Object must specify the in field.", [header])


def test_a_word_of_time_between_the_negation_and_its_head_is_skipped() -> None:
    """"not yet used": the negated word is "used", not "yet" (a claim saying "already used" was
    passed, its head never found)."""
    servo = "Servo is not yet used in consumer-oriented browsers."
    assert mismatch("Servo is already used in consumer browsers.", [servo])
    assert not mismatch("Servo is not used in consumer browsers yet.", [servo])


@pytest.mark.parametrize(("claim", "sentence"), [
    ("Tenure is governed by the type of appointment, regardless of whether he has a competitive status.",
     "Tenure shall be governed by the type of appointment without regard to whether he has a competitive status."),
    ("The fee is charged whatever the amount.", "The fee is charged no matter how small the amount is."),
])
def test_regardless_said_with_a_negation_word_is_no_mismatch(claim: str, sentence: str) -> None:
    assert mismatch(claim, [sentence]) is False
