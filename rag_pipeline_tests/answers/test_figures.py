"""Figures in one canonical form (answers/figures.py), the figure-role rule (answers/roles.py)
and negation cues (answers/polarity.py), without a database: a figure written differently is the
same figure, hostile numbers are refused cheaply instead of read, a figure of the passage given
to another subject is found, and a negation is told from a bound or a number sign."""

from __future__ import annotations

import pytest

from rag_pipeline.answers.fields import canonical, extract, facts, missing
from rag_pipeline.answers.figures import MAX_DIGITS, prepare, value, values
from rag_pipeline.answers.polarity import mismatch, negated
from rag_pipeline.answers.roles import misplaced


@pytest.mark.parametrize(("written", "expected"), [
    ("1,500,000", "1500000"), ("1.500.000,5", "1500000.5"), ("1.500,5", "1500.5"), ("0,30", "0.3"),
    ("2,32,822", "232822"), ("995.0", "995"), ("0007", "7"),
])
def test_a_number_is_read_in_english_continental_and_indian_grouping(written: str, expected: str) -> None:
    assert value(written) == expected


@pytest.mark.parametrize(("claim", "passage"), [
    ("1.5 million people", "1,500,000 people"),
    ("1,5 Mio. Menschen", "1500000 Menschen"),
    ("1 500 000 people", "1500000 people"),  # plain-space grouping (two groups or more)
    ("1\u202f500 people", "1500 people"),  # narrow no-break space
    ("1'500'000 CHF", "1500000 CHF"),
    ("15 per cent", "15 %"), ("15 percent", "15%"), ("15 Prozent", "15 %"), ("15 pour cent", "15%"),
    ("\u0661\u0665 %", "15%"),  # Arabic-Indic digits
    ("\uff11\uff15%", "15%"),  # full-width digits
    ("sixteen channels", "16 channels"),
    ("$10 billion", "USD 10,000,000,000"),
    ("tax liability times 0.15", "Tax Liability x .15"),  # a rate without its leading zero (IRM 2.3.59)
    ("a factor of .5", "a factor of 0.5"), ("(-.25)", "(-0.25)"),
])
def test_a_figure_written_differently_prepares_the_same(claim: str, passage: str) -> None:
    assert values(prepare(claim)) == values(prepare(passage)), (prepare(claim), prepare(passage))


def test_a_point_after_a_word_or_a_point_is_no_leading_zero() -> None:
    """Only a point that starts a number reads as "0.": a version, a file name's part and an
    ellipsis keep what they were, and the changed rate is still missing."""
    assert values(prepare("v1.15, file.15, ...5 and 3.15")) == {"1.15", "15", "5", "3.15"}
    passage = facts("15% Deferral Installment (calculated Tax Liability x .15)")
    assert missing("times 0.16", extract("times 0.16"), passage)[0].describe() == "number '0.16'"


def test_a_range_and_a_unicode_minus_are_read_as_figures_without_a_sign() -> None:
    assert values(prepare("10\u201315 days")) == {"10", "15"}  # en dash
    assert values(prepare("\u22125 degrees")) == {"5"}  # Unicode minus: the sign is said in words
    assert prepare("\u22125") == "-5"
    assert missing("It takes 10 to 15 days.", extract("It takes 10 to 15 days."), facts("allow 10\u201315 days")) == []


def test_dates_amounts_and_percentages_take_one_canonical_form_for_the_score() -> None:
    assert canonical("issued on 2013-02-12") == canonical("issued on February 12, 2013") == "issued on 2013-02-12"
    assert canonical("costs 165 EUR") == canonical("costs €165") == "costs EUR 165"
    assert canonical("up 15 per cent") == "up 15%"


@pytest.mark.parametrize("hostile", [
    "9" * 100_000,  # a digit run no claim states: not a figure, and not read as one
    "1" + "0" * (MAX_DIGITS + 1),
    "1e308", "1e999999999", "9" * 50 + ".5 million",
    "1,2,3,4,5,6,7,8,9" * 1000, "." * 10_000 + "5", "١" * 5_000,
])
def test_hostile_numbers_are_refused_or_read_without_blowing_up(hostile: str) -> None:
    prepared = prepare(hostile)
    found = values(prepared)
    assert all(len(v) <= MAX_DIGITS + 12 for v in found)  # a multiplier adds at most 9 digits
    extract(hostile), facts(hostile), canonical(hostile)  # the rule and the score read it too


def test_a_value_too_long_to_be_a_figure_is_none_and_a_long_one_is_exact() -> None:
    assert value("9" * (MAX_DIGITS + 1)) is None
    assert value("1" * MAX_DIGITS) == "1" * MAX_DIGITS  # no rounding to the default 28 digits
    assert value("1.5", "million") == "1500000"


FINLAND = ("Finland's population of 5.2 million is divided into three language groups. Around 92 % speak "
           "Finnish; the Swedish-speaking minority comprises about 6 % of the total.")
CODES = "Code 660: Astrophysics Science Division\n\nCode 670: Heliophysics Science Division\n"
FORTRESS = ("The loan bears interest at either (a) LIBOR (as defined in the Fortress Credit Agreement) plus 7.75%, "
            "or (b) a base rate determined by reference to the federal funds rate plus 0.50%, plus 6.75%.")


@pytest.mark.parametrize(("claim", "passage", "figure", "rival"), [
    ("About 92 % of Finland's population speaks Swedish.", FINLAND, "92%", "6%"),
    ("Code 660 is the Heliophysics Science Division.", CODES, "660", "670"),
    ("The Fortress Credit Agreement charges LIBOR plus 6.75%.", FORTRESS, "6.75%", "7.75%"),
])
def test_a_figure_the_passage_gives_to_another_subject_is_misplaced(claim: str, passage: str, figure: str, rival: str) -> None:
    assert [(m.figure, m.rival) for m in misplaced(claim, passage)] == [(figure, rival)]


@pytest.mark.parametrize(("claim", "passage"), [
    ("About 6 % of Finland's population speaks Swedish.", FINLAND),
    ("Code 670 is the Heliophysics Science Division.", CODES),
    ("The Fortress Credit Agreement charges LIBOR plus 7.75%.", FORTRESS),
    ("Around 92 % of Finns speak Finnish and 6 % speak Swedish.", FINLAND),  # both figures given: no rival
    ("Flight 302 crashed on March 10, 2019 with 157 fatalities.", "On March 10, 2019, Ethiopian Airlines Flight 302 "
     "crashed, with 157 fatalities. On October 29, 2018, Lion Air Flight 610 crashed, with 189 fatalities."),
    # a date's parts are not figures here, and a rival as close to the claim's words as its own figure is a tie
    ("The claim holds no figure.", FINLAND),
])
def test_a_figure_in_its_own_role_stands(claim: str, passage: str) -> None:
    assert misplaced(claim, passage) == []


@pytest.mark.parametrize(("text", "negates"), [
    ("The standing trustee may not advertise in newspapers.", True),
    ("Tiers do not represent maturity levels.", True),
    ("It can't be reused.", True), ("This is no longer the case.", True), ("Il n'est pas permis.", True),
    ("Das ist nicht erlaubt.", True), ("Tento zákon není účinný.", True), ("Det är inte tillåtet.", True),
    ("A trustee may advertise.", False),
    ("Records are kept for not less than seven years.", False),  # a bound: "at least 7 years"
    ("Purchases should not exceed $100.", False),  # a bound: "up to $100"
    ("Law No. 270 was passed.", False), ("It is No. 07-1315.", False),  # a number sign
    ("Not only trips but also meals are paid.", False),
])
def test_negation_cues_are_told_from_bounds_and_number_signs(text: str, negates: bool) -> None:
    assert negated(text) is negates


@pytest.mark.parametrize(("text", "negates"), [
    # French without its "ne" (grep(1) in French: a faithful "not as a regular expression" was flagged)
    ("-F Interpréter le MOTIF comme étant une chaîne figée, pas une expression rationnelle.", True),
    ("Option jamais utilisée.", True), ("Aucun fichier trouvé.", True), ("Rien à signaler.", True),
    ("Un fichier vide ne contient pas de motif et ne donne donc aucun résultat.", True),
    # the noun "pas" (a step), and a Czech "pas" (a passport), negate nothing
    ("Avancer pas à pas dans le code.", False), ("Faire un pas de côté.", False), ("Un faux pas.", False),
    ("Cestovní pas je platný deset let.", False),
])
def test_french_negates_without_its_ne_and_the_noun_pas_does_not(text: str, negates: bool) -> None:
    assert negated(text) is negates


def test_a_faithful_claim_on_french_without_ne_has_no_polarity_flag() -> None:
    passage = ["-F, --fixed-strings Interpréter le MOTIF comme étant une chaîne figée, pas une expression rationnelle."]
    assert not mismatch("With -F, grep interprets the pattern as a fixed string, not as a regular expression.", passage)
    assert mismatch("With -F, grep interprets the pattern as a regular expression.", passage)


def test_a_polarity_mismatch_compares_the_claim_with_its_best_sentences() -> None:
    assert mismatch("Tiers represent maturity levels.", ["Tiers do not represent maturity levels."])
    assert mismatch("The nut cannot be reused.", ["The nut can be removed and reused.", "Only a wrench loosens it."])
    # a negated claim may join two sentences: its negation in the second-best counts
    assert not mismatch("A card may be used for purchases, which should never be routine.",
                        ["The trustee may use a card for purchases.", "Such purchases should never be routine."])
    assert not mismatch("Tiers represent maturity levels.", [])


def test_a_negation_said_by_a_prefix_on_the_other_side_is_no_mismatch() -> None:
    assert not mismatch("Unlisted cities have a hotel cap of EUR 120.", ["For cities that are not listed, the cap is EUR 120."])
    assert not mismatch("Non-compliant systems are reported.", ["Systems that are not compliant are reported."])
    assert mismatch("Listed cities have a hotel cap of EUR 120.", ["For cities that are not listed, the cap is EUR 120."])


HOSTILE = [(unit * 4000)[:4000] for unit in ("a/", "a-", "1-", "not ", "not un", "x1.", "EUR 1 ", "1\u00a0", "(1)")]


def test_the_role_rule_tokenises_as_its_single_pattern_did(corpus_dir) -> None:
    """The run-by-run tokeniser (linear on a 4,000-character "a/a/a/...", where the single
    pattern took 0.3 s) finds exactly the figures and words the pattern found, on real abstracts
    and hostile text."""
    import json
    import re

    from rag_pipeline.answers.roles import _tokens

    pattern = re.compile(r"[\w.,\-/$€£%]*\d[\w.,\-/$€£%]*|[^\W\d_]+")
    lines = (corpus_dir / "qa" / "scifact_beir" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:300]
    texts = [json.loads(line)["text"] for line in lines] + HOSTILE + ["EUR 1,500.- / 3-4 % of $5m, a/b 7th"]
    for text in texts:
        assert _tokens(text) == pattern.findall(text), text[:80]


def test_a_negation_by_prefix_is_looked_up_word_by_word() -> None:
    """A claim of 1,000 "not X" against a passage of the same length: each looked up in the
    passage's words (the same answers as a search of the text), and hostile text judged."""
    assert not mismatch("The supplier is non-compliant-ish.", ["The supplier is not compliant-ish."])
    assert mismatch("The supplier is compliant.", ["The supplier is not compliant."])
    for text in HOSTILE:
        assert mismatch(text, [text]) in (True, False)
    prefixed = " ".join(f"unw{i}" for i in range(1000))
    assert not mismatch(prefixed, [" ".join(f"not w{i}" for i in range(1000))])
    assert mismatch(prefixed, [" ".join(f"not w{i}" for i in range(1000)) + " not v"])


# A passage as the parsers now write superscripts (parsing/superscripts.py): NIST's CSF 1.1 and the
# IBM Redbook of the shared corpus, whose footnote marks had read "Act of 20141" and "Center1"
NIST = ("The Cybersecurity Enhancement Act of 2014^1 (CEA) updated the role of the National Institute of "
        "Standards and Technology, and ISO 31000:2009^6 was referenced.")
IBM = ("The Identity Theft Resource Center^1 reports that almost 5,000 data breaches have been made public since "
       "2005, exposing over 600 million records of data.")


@pytest.mark.parametrize(("claim", "passage"), [
    ("The Cybersecurity Enhancement Act of 2014 updated the role of NIST.", NIST),
    ("The Identity Theft Resource Center reports almost 5,000 data breaches since 2005, exposing over 600 million records.", IBM),
    ("The limit is one million units.", "The limit is 10^6 units."),
])
def test_a_footnote_mark_is_no_figure_and_a_power_of_ten_is_its_value(claim: str, passage: str) -> None:
    assert missing(claim, extract(claim), facts(passage)) == []
    assert misplaced(claim, passage) == []


def test_a_changed_figure_beside_a_footnote_mark_is_still_caught() -> None:
    claim = "The Cybersecurity Enhancement Act of 2015 updated the role of NIST."
    assert [f.describe() for f in missing(claim, extract(claim), facts(NIST))]
    claim = "The limit is ten thousand units."
    assert missing(claim, extract(claim), facts("The limit is 10^6 units."))


def test_a_quote_matches_text_whose_footnote_marks_it_leaves_out() -> None:
    from rag_pipeline.answers.figures import normalise

    assert normalise("Cybersecurity Enhancement Act of 2014 (CEA) updated") in normalise(NIST)
    assert normalise("Act of 2014^1") == normalise("Act of 2014")
