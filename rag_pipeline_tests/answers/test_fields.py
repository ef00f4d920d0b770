"""Exact fields by rule (answers/fields.py) and answer parsing (answers/draft.py), without a
database: the normalisations of issue 24 hold both ways, a different figure is never stated, a
table figure counts only in its row and column, and plain text splits into claims by sentence."""

from __future__ import annotations

import pytest

from rag_pipeline.answers.draft import MAX_CLAIMS, AnswerError, read_answer
from rag_pipeline.answers.fields import extract, facts, missing, normalise

RATES = ("The rates below apply.\n\n| City | Hotel cap (EUR) | Meals per day (EUR) |\n| --- | --- | --- |\n"
         "| Berlin | 140 | 42 |\n| Hamburg | 135 | 42 |\n\nUnlisted cities: the hotel cap is EUR 120 per night.")


@pytest.mark.parametrize(("claim", "passage"), [
    ("Requests go in 10 working days ahead.", "submitted at least ten working days before departure"),
    ("Requests go in ten working days ahead.", "submitted at least 10 working days before departure"),
    ("The cap is EUR 165.", "the cap is 165 EUR"),
    ("The cap is €165.", "the cap is EUR 165"),
    ("It starts on 1 January 2026.", "effective 2026-01-01"),
    ("It starts on January 1, 2026.", "effective 1 January 2026"),
    ("Revenue was $19,984,378.", "gross revenues of $19,984,378"),
    ("Revenue was 19984378 dollars.", "gross revenues of $19,984,378"),
    ("The margin is 7.75 percent.", "LIBOR plus 7.75%"),
    ("The mileage is EUR 0.3 a kilometre.", "EUR 0.30 per kilometre"),
    ("It was filed on Form 10-K in November 2021.", "this Form 10-K, filed 15 November 2021"),
    ("Berlin hotels are capped at EUR 140.", RATES),
    ("The hotel cap for unlisted cities is EUR 120 per night.", RATES),
    # evalsets/answers: an acronym by the words it abbreviates, dates in the passage's language,
    # Indian digit grouping
    ("Todd Cravens became President and CEO on July 24, 2017.",
     "Todd Cravens was appointed as our President and Chief Executive Officer on July 24, 2017."),
    ("BMFOL displays BMF data.", "command code BMFOL to display the Business Master File data"),
    ("Edition 0 is dated 31 December 2016.", "0. Auflage, 31. Dezember 2016 Martin Thoma"),
    ("The meetings were held in December 2020.", "Des rencontres de validation ont été réalisées en novembre et décembre 2020"),
    ("The law takes effect on 1 January 2026.", "Tento zákon nabývá účinnosti dnem 1. ledna 2026"),
    ("Reliance created 232,822 new jobs.", "2,32,822\n\nNew jobs created"),
    ("The category is Identity Management and Access Control (PR.AC).", "renamed to Identity Management and Access Control (PR.AC)"),
])
def test_a_field_written_differently_is_stated(claim: str, passage: str) -> None:
    assert extract(claim), claim
    assert missing(claim, extract(claim), facts(passage)) == []


@pytest.mark.parametrize(("claim", "passage", "absent"), [
    ("Hotels in Berlin are paid up to EUR 195 a night.", RATES, "EUR 195"),
    ("Hotels in Berlin are paid up to EUR 135 a night.", RATES, "EUR 135"),  # Hamburg's figure
    ("Meals in Berlin are paid at EUR 140 a day.", RATES, "EUR 140"),  # the hotel-cap column
    ("Requests go in 10 days ahead.", "submitted at least five working days before", "10 day"),
    ("Requests go in ten working days ahead.", "submitted at least ten calendar days before", "10 working day"),
    ("It starts on 2 January 2026.", "effective 2026-01-01", "2026-01-02"),
    ("The margin is 7.5%.", "LIBOR plus 7.75%", "7.5"),
    ("Trips abroad need the CEO's approval.", "approved by the head of department", "ceo"),
    ("See IRM 2.3.60.", "IRM 2.3.59 describes", "2.3.60"),
    ("The CEO approves the budget.", "the company expects operating costs to rise", "ceo"),  # initials of prose
    ("The law was passed on 13 July 2025.", "ZÁKON ze dne 3. července 2025", "2025-07-13"),
    ("Reliance created 2,23,822 new jobs.", "2,32,822\n\nNew jobs created", "223822"),  # was read as no number
    # a dotted code is one identifier, not two acronyms the passage's capitalised words may spell
    ("It was renamed Identity Management and Access Control (PR.IM).",
     "renamed to Identity Management and Access Control (PR.AC)", "pr.im"),
])
def test_a_different_figure_is_not_stated(claim: str, passage: str, absent: str) -> None:
    assert [f.key for f in missing(claim, extract(claim), facts(passage))] == [absent]


@pytest.mark.parametrize(("claim", "passage"), [
    # evalsets/answers/corpus_answers.yaml, xl-cz-law-extract-age-ok: the Czech law's "3 měsíce"
    ("The extract must not be older than 3 months.", "výpis nesmí být starší než 3 měsíce."),
    ("The licence runs for 2 years.", "Die Lizenz läuft 2 Jahre."),
    ("The licence runs for 2 years.", "La licence est valable 2 ans."),
    ("The penalty is up to 5 years.", "potrestá odnětím svobody až na 5 let"),
    ("Appeals are lodged within 15 days.", "Odvolání se podává do 15 dnů od doručení."),
    ("Appeals are lodged within 15 days.", "Le recours est formé dans un délai de 15 jours."),
    ("Requests go in 10 working days ahead.", "spätestens 10 Werktage vor der Reise"),
    ("Requests go in 10 working days ahead.", "au moins 10 jours ouvrables avant le départ"),
    ("Requests go in 10 working days ahead.", "nejméně 10 pracovních dnů před cestou"),
    ("The meeting lasts 2 hours.", "Die Sitzung dauert 2 Stunden."),
    ("A semester has 14 weeks.", "Un semestre compte 14 semaines."),
])
def test_a_duration_in_the_passages_language_is_stated(claim: str, passage: str) -> None:
    assert [f.kind for f in extract(claim)] == ["duration"]
    assert missing(claim, extract(claim), facts(passage)) == []


@pytest.mark.parametrize(("claim", "passage", "absent"), [
    ("The extract must not be older than 3 months.", "výpis nesmí být starší než 3 týdny.", "3 month"),
    ("The licence runs for 2 years.", "Die Lizenz läuft 2 Monate.", "2 year"),
    ("The licence runs for 2 years.", "La licence est valable 3 ans.", "2 year"),
    ("Requests go in 10 working days ahead.", "spätestens 10 Tage vor der Reise", "10 working day"),
    ("Requests go in 10 working days ahead.", "au moins 10 jours calendaires avant le départ", "10 working day"),
    ("Requests go in 10 days ahead.", "nejméně 10 hodin před cestou", "10 day"),
])
def test_a_duration_of_another_length_or_unit_in_another_language_is_not_stated(claim: str, passage: str, absent: str) -> None:
    assert [f.key for f in missing(claim, extract(claim), facts(passage))] == [absent]


def test_a_foreign_unit_that_is_an_english_word_after_a_number_is_no_duration() -> None:
    # "an" (French: year) and "den" (Czech: day) are left out: after a number in English text they
    # are the article and a word, and a duration read there would have to be in the passage
    assert [f.kind for f in extract("Step 2 an overview of chapter 3 den of thieves.")] == ["number", "number"]


def test_words_that_are_not_figures_are_left_alone() -> None:
    assert extract("No one needs a one-off approval.") == []
    assert normalise("approved\u00a0in  ad\u00advance \u2013 “now”") == 'approved in advance - "now"'


def test_plain_text_splits_into_claims_by_sentence_with_their_markers() -> None:
    draft = read_answer(b"Trips abroad need the head of department [chunk 51]. Berlin hotels cost up to EUR 165."
                        b"[chunk 52] Requests go in 10 days ahead. Version 3.1.0 applies. [chunks 7, 8]", log_id=4)
    assert [(c.text, [x.chunk_id for x in c.citations]) for c in draft.claims] == [
        ("Trips abroad need the head of department.", [51]), ("Berlin hotels cost up to EUR 165.", [52]),
        ("Requests go in 10 days ahead.", []), ("Version 3.1.0 applies.", [7, 8])]


def test_limits_are_stated_in_the_error() -> None:
    with pytest.raises(AnswerError, match=f"limit is {MAX_CLAIMS}"):
        read_answer(b"It is so. " * (MAX_CLAIMS + 1), log_id=1)
    with pytest.raises(AnswerError, match="chunk_id' must be a positive whole number"):
        read_answer(b'{"log_id": 1, "claims": [{"text": "a", "citations": [{"chunk_id": -5}]}]}')
    with pytest.raises(AnswerError, match="names search 1 but search 2"):
        read_answer(b'{"log_id": 1, "text": "a"}', log_id=2)


@pytest.mark.parametrize(("claim", "passage", "heading"), [
    # a numbered part in Roman numerals, in the passage or its heading, is the claim's Arabic number
    ("Part 1 (Rule I) gives its authority.", "AUTHORITY: 5 U.S.C, 3301, 3302.", "PART I—COVERAGE AND DEFINITIONS (RULE I)"),
    ("Class III gaming requires a Tribal-State Compact.", "Class III gaming, such as table games, requires a compact.", ""),
    ("Chapter 14 sets the fees.", "CHAPTER XIV sets the fees for each filing.", ""),
    # OCR: a full stop for the comma of a date, and a month and year joined by a dash
    ("It was amended on 23 January 2017.", "[28 FR 10023, as amended by E.0. 13764, 82 FR 8115, Jan. 23. 2017]", ""),
    ("The November 2015 table lists the checks.", "| NICS Firearm Background Checks November - 2015 | |", ""),
    # a footnote's number glued to its first word in a PDF
    ("The FAISS configuration used the HNSW index type.", "10FAISS configuration: we used HNSW index type on CPU.", ""),
    # an identifier written as the claim writes it, in a passage in another script
    ("Its classification code is U07.1.", "질병분류기호는 “U07.1” 로 표시하고 있어서", ""),
])
def test_a_field_written_as_a_numbered_part_an_ocr_date_or_a_glued_mark_is_stated(claim: str, passage: str, heading: str) -> None:
    assert missing(claim, extract(claim), facts(passage, heading)) == []


@pytest.mark.parametrize(("claim", "passage", "absent"), [
    ("Class III gaming requires a compact.", "Class II gaming, such as bingo, requires a compact.", "3"),
    ("Part 2 gives its authority.", "AUTHORITY: 5 U.S.C. 3301.", "2"),  # heading "PART I" below
    ("It was amended on 23 January 2016.", "as amended by E.0. 13764, 82 FR 8115, Jan. 23. 2017]", "2016-01-23"),
    ("The MAISS configuration used HNSW.", "10FAISS configuration: we used HNSW index type on CPU.", "maiss"),
    ("The 10-K was filed late.", "The 110-K form was filed late.", "10-k"),  # digits glued before digits change the code
    ("Its code is U07.2.", "질병분류기호는 “U07.1” 로 표시하고 있어서", "u07.2"),
])
def test_a_numbered_part_or_code_of_another_value_is_not_stated(claim: str, passage: str, absent: str) -> None:
    found = missing(claim, extract(claim), facts(passage, "PART I—COVERAGE AND DEFINITIONS (RULE I)"))
    assert absent in [f.key for f in found]


@pytest.mark.parametrize("text", ["Appendix C lists the forms.", "Part of it is I think wrong.", "Rule IIII is no numeral.",
                                  "Title " + "X" * 10_000])
def test_letters_that_are_no_roman_numeral_of_a_part_stay_letters(text: str) -> None:
    from rag_pipeline.answers.figures import arabic_numerals
    assert arabic_numerals(text) == text
