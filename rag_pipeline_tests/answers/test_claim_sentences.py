"""Plain-text answers split into the claims their writer meant (answers/claim_sentences.py):
abbreviations, initials, reference words and dated ordinals stay inside their sentence; list
items, paragraphs, quotes, table rows and headings end one (a table row read without its pipes);
headings, table headers, lead-ins and questions are not claims unless they carry a marker, and a
list of sources is none even then; huge and hostile answers split in linear time or are refused by their limit.
The verdict on such an answer through the CLI, on real syncs: test_verify.py."""

from __future__ import annotations

import pytest

from rag_pipeline.answers.draft import MAX_CLAIMS, AnswerError, read_answer


def _claims(text: str) -> list[tuple[str, list[int]]]:
    return [(c.text, [x.chunk_id for x in c.citations]) for c in read_answer(text.encode(), log_id=1).claims]


@pytest.mark.parametrize(("text", "claims"), [
    ("It applies to all staff, e.g. contractors [chunk 5]. Dr. Smith approved it in the U.S. office [chunk 6].",
     [("It applies to all staff, e.g. contractors.", [5]), ("Dr. Smith approved it in the U.S. office.", [6])]),
    ("Growth was 3.5 percent [chunk 7]. See Fig. 2 and Sec. 4.2 for details [chunk 8].",
     [("Growth was 3.5 percent.", [7]), ("See Fig. 2 and Sec. 4.2 for details.", [8])]),
    ("It is governed by 5 U.S.C. 552 [chunk 15]. Its CEO is J. R. Smith of Acme Inc. [chunk 16]",
     [("It is governed by 5 U.S.C. 552.", [15]), ("Its CEO is J. R. Smith of Acme Inc.", [16])]),
    ("Die Frist beträgt 3 Monate, z. B. bei Kündigung [chunk 21]. Sie beginnt am 1. Januar 2026 [chunk 22].",
     [("Die Frist beträgt 3 Monate, z. B. bei Kündigung.", [21]), ("Sie beginnt am 1. Januar 2026.", [22])]),
    ("Des frais de 10 € s'appliquent, cf. art. 5 [chunk 23]. Le délai est de 15 jours [chunk 24].",
     [("Des frais de 10 € s'appliquent, cf. art. 5.", [23]), ("Le délai est de 15 jours.", [24])]),
    ("## Leave\n\nIn short:\n\n- Employees get 25 days of leave [chunk 5]\n- Managers approve requests [chunk 6]\n",
     [("Employees get 25 days of leave", [5]), ("Managers approve requests", [6])]),
    ("**Leave policy**\n1. Employees get 25 days [chunk 19].\n2) Managers approve [chunk 20].",
     [("Employees get 25 days.", [19]), ("Managers approve.", [20])]),
    ("Employees get 25 days of leave [chunk 5]\n\nManagers approve requests [chunk 6]",
     [("Employees get 25 days of leave", [5]), ("Managers approve requests", [6])]),
    # a wrapped line stays one sentence; a number ending a sentence still ends it
    ("Employees get leave, which\nmanagers approve [chunk 5]. The total was 25. Managers sign [chunk 6].",
     [("Employees get leave, which managers approve.", [5]), ("The total was 25.", []), ("Managers sign.", [6])]),
    ("Is leave paid? Yes, it is paid [chunk 13]! The fee is EUR 165 a night [chunk 11]… Meals are extra [chunk 12].",
     [("Yes, it is paid!", [13]), ("The fee is EUR 165 a night …", [11]), ("Meals are extra.", [12])]),
    # a marker keeps a heading or a lead-in as a claim: the writer cited it
    ("## Hotels cost EUR 140 [chunk 3]\nThe rules follow: [chunk 4]",
     [("## Hotels cost EUR 140", [3]), ("The rules follow:", [4])]),
    # Markdown tables: a claim per row, read without pipes; header and delimiter rows are no claims
    ("Caps per night:\n\n| City | Hotel cap |\n|---|:---:|\n| Prague | EUR 120 [chunk 5] |\n| Vienna | EUR 140 [chunk 6] |\n",
     [("City: Prague; Hotel cap: EUR 120", [5]), ("City: Vienna; Hotel cap: EUR 140", [6])]),
    ("City | Cap\n--- | ---\nBrno | EUR 90 [chunk 11]\nLinz | EUR 95\n\nMeals are extra [chunk 12].",
     [("City: Brno; Cap: EUR 90", [11]), ("City: Linz; Cap: EUR 95", []), ("Meals are extra.", [12])]),
    # a quote starts a block and its lines continue it, markers off
    ("Taxis are reimbursed [chunk 7].\n> Hotels need approval\n> by the manager [chunk 8].\n>\n> Meals are extra [chunk 9].",
     [("Taxis are reimbursed.", [7]), ("Hotels need approval by the manager.", [8]), ("Meals are extra.", [9])]),
    ("> - Employees get 25 days [chunk 5]\n> - Managers approve [chunk 6]",
     [("Employees get 25 days", [5]), ("Managers approve", [6])]),
    # sentences opening with emphasis or code; a full stop inside code ends nothing
    ("Trips need approval [chunk 1]. **Taxis** are reimbursed [chunk 2]. `sync` runs nightly [chunk 3].",
     [("Trips need approval.", [1]), ("**Taxis** are reimbursed.", [2]), ("`sync` runs nightly.", [3])]),
    ("Edit `config.yaml. Then` restart the service [chunk 4]. It reloads [chunk 5].",
     [("Edit `config.yaml. Then` restart the service.", [4]), ("It reloads.", [5])]),
    # a list of sources is no claim, and its markers cite none of the claims above it
    ("Hotels cost EUR 140 [chunk 5]. Taxis are reimbursed [chunk 6].\n\nSources: [chunk 5], [chunk 6]",
     [("Hotels cost EUR 140.", [5]), ("Taxis are reimbursed.", [6])]),
    ("Hotels cost EUR 140 [chunk 5].\n\n**References**\n- [chunk 5]\n- [chunk 9]",
     [("Hotels cost EUR 140.", [5])]),
    ("Hotels cost EUR 140 [chunk 5].\n\n## Zdroje\n\n1. [chunk 5]\n2. [chunk 9]\n", [("Hotels cost EUR 140.", [5])]),
    # a one-word claim is still a claim; a marker alone after a claim's paragraph still cites it
    ("Approved [chunk 4].", [("Approved.", [4])]),
    ("Hotels cost EUR 140 a night.\n\n[chunk 5]", [("Hotels cost EUR 140 a night.", [5])]),
])
def test_an_answer_splits_into_the_claims_its_writer_meant(text: str, claims: list) -> None:
    assert _claims(text) == claims


def test_an_uncited_sentence_is_still_a_claim() -> None:
    assert _claims("Trips need approval [chunk 1]. Hotels cost up to EUR 140.") == [
        ("Trips need approval.", [1]), ("Hotels cost up to EUR 140.", [])]


@pytest.mark.parametrize("text", [
    "A. " * 300_000,  # a million characters of initials: one sentence, read in linear time
    "x" * 1_000_000,
    ". " * 500_000,
    "\n" * 1_000_000,
    "- " * 500_000,
    "> " * 500_000,
    "|" * 1_000_000,
    "| a |\n|---|\n" + "| x [chunk 5] |\n" * 60_000,  # a table of 60,000 cited rows: the claim limit
    "| a |\n" + "-" * 1_000_000 + "x\n",
    ("`a. B" * 200_000),
])
def test_a_huge_hostile_answer_is_split_or_refused_without_hanging(text: str) -> None:
    try:
        claims = read_answer(text.encode(), log_id=1).claims
    except AnswerError as exc:
        assert "limit" in str(exc) or "has no claims" in str(exc), exc
    else:
        assert len(claims) <= MAX_CLAIMS


def test_too_many_list_items_are_refused_by_the_claim_limit() -> None:
    with pytest.raises(AnswerError, match=f"limit is {MAX_CLAIMS}"):
        read_answer(("- Employees get leave [chunk 5]\n" * (MAX_CLAIMS + 1)).encode(), log_id=1)


@pytest.mark.parametrize("marker", ["[chunk 51]", "[chunk: 51]", "[chunk:51]", "[chunk #51]", "[chunk_id 51]",
                                    "[Chunk ID: 51]", "[CHUNKS 51]"])
def test_the_marker_spellings_generators_write_all_cite(marker: str) -> None:
    assert _claims(f"Hotels cost up to EUR 140 {marker}. Meals are extra [chunks: #52 and #53].") == [
        ("Hotels cost up to EUR 140.", [51]), ("Meals are extra.", [52, 53])]


def test_a_marker_that_names_no_chunk_id_is_refused() -> None:
    with pytest.raises(AnswerError, match="'abc' is not a chunk id"):
        read_answer(b"Hotels cost EUR 140 [chunk abc].", log_id=1)
