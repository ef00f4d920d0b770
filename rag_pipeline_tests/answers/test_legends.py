"""A code explained with its neighbour's meaning (answers/legends.py): "2 means a TC 902 was input
through an IDRS terminal" where the passage's legend gives that to 3, "code G identifies a Federal
Employer" where G is State or Local Government, are reported with both codes named; a faithful
explanation in other words, a code the legend does not hold, a claim that explains no code, prose
with "=" in it and hostile text decide nothing. The last test verifies such claims through the
CLI on a real index with the real model."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from helpers import ANOTHER_DOCUMENT, sync_folder, verify_claims

from rag_pipeline.answers.legends import legends, swapped

EXTRACTION = ("8 44-51 IDRS Extraction Indicator\n\n0 = Not under IDRS control\n\n"
              "1 = Extracted for IDRS by selection criteria (normal extraction)\n\n"
              "2 = Extracted by entity or tax module TC 902\n\n3= TC 902 through an IDRS terminal\n\n"
              "4 = Tax Module requested by not available\n\n8 38-40 SFR literal\n\nSFR = Substitute for Return")
EMPLOYMENT = ("13 19 Employment Code\n\nC = Church Electing Non-FICA\n\nF = Federal Employer\n\n"
              "G = State or Local Government\n\nI = Indian Tribal Government\n\nM = Maritime\n\n"
              "13 67 F944 BYPASS Indicator\n\n0 = not significant\n\n1 = turned on when TC01X is set to 1")


@pytest.mark.parametrize(("claim", "passage", "key", "rival"), [
    ("IDRS Extraction Indicator 0 means the module is not under IDRS control, 1 means it was extracted by "
     "selection criteria, and 2 means a TC 902 was input through an IDRS terminal.", EXTRACTION, "2", "3"),
    ("Employment code G identifies a Federal Employer.", EMPLOYMENT, "G", "F"),
    ("The employment code M stands for an Indian Tribal Government.", EMPLOYMENT, "M", "I"),
    ("In the extraction indicator, 4 = extracted by selection criteria.", EXTRACTION, "4", "1"),
])
def test_a_code_given_its_neighbours_meaning_is_named(claim: str, passage: str, key: str, rival: str) -> None:
    found = swapped(claim, passage)
    assert [(f.key, f.rival) for f in found] == [(key, rival)]
    assert repr(key) in found[0].describe() and repr(rival) in found[0].describe()


@pytest.mark.parametrize(("claim", "passage"), [
    ("Indicator 3 means a TC 902 was input through an IDRS terminal.", EXTRACTION),
    ("Code G denotes state and local government employers; F means a federal one.", EMPLOYMENT),
    ("0 means the module is not under IDRS control.", EXTRACTION),
    # a legend flattened into one line, quoted whole: each code's meaning ends where the next code's begins
    ("13 58 Previous Module Base Code 0 = Penalty Exclusion 1 = Monthly 2 = Semi-weekly 3 = Monthly/Daily/Semi-weekly",
     "13 58 Previous Module Base Code\n\n0 = Penalty Exclusion\n\n1 = Monthly\n\n2 = Semi-weekly\n\n3 = Monthly/Daily/Semi-weekly"),
    # a meaning with too few words to point anywhere, or words no line holds: left to the other checks
    ("Code C means church.", EMPLOYMENT),
    ("Code M means a ship owner.", EMPLOYMENT),
    # a code the legend does not hold
    ("Code Z identifies a Federal Employer.", EMPLOYMENT),
    # no code explained, and prose or formulas with "=" in them are no legend
    ("Federal employers have their own employment code.", EMPLOYMENT),
    ("x = 2 means the federal government pays.", "Let x = 2 and y = 3.\n\nThen x + y = 5 for the federal government."),
    ("", EMPLOYMENT),
    (EMPLOYMENT, ""),
])
def test_a_faithful_explanation_or_an_unknown_code_stands(claim: str, passage: str) -> None:
    assert swapped(claim, passage) == []


def test_a_legend_is_a_run_of_code_lines_of_two_codes_or_more() -> None:
    found = legends(EMPLOYMENT)
    assert [[key for key, _ in block] for block in found] == [["C", "F", "G", "I", "M"], ["0", "1"]]
    assert legends("SFR = Substitute for Return") == ()  # one line is a definition, not a legend


@pytest.mark.parametrize("text", [
    "A = b c d\n" * 100_000,
    ("0 = " + "word " * 50_000 + "\n") * 4,
    "1 means " * 50_000,
    "\u0000 = \u202e\n\ufeff = \U0001f600\n" * 20_000,
])
def test_hostile_text_is_read_in_linear_time(text: str) -> None:
    """About a second or less each here; the limit is far above that."""
    started = time.perf_counter()
    swapped(text[:4000], text)
    assert time.perf_counter() - started < 60


def test_verify_names_the_swapped_code_through_the_cli(capsys: pytest.CaptureFixture[str], tmp_path: Path, db_url: str) -> None:
    """On a real index, through `verify`: the faithful explanation is supported, the swapped one is
    unsupported with both codes named, though every word and figure of it is in the passage."""
    config = sync_folder(capsys, tmp_path, db_url, {
        "bmfol.md": "# Command Code BMFOL Entity Display\n\nThe display shows the employment code of the employer "
                    "in line 13, position 19.\n\n" + EMPLOYMENT.split("\n\n13 67")[0] + "\n"} | ANOTHER_DOCUMENT)
    results = verify_claims(capsys, config, db_url, "What does employment code G mean on the BMFOL display?", "bmfol.md", {
        "right": "On the BMFOL display, employment code G identifies a State or Local Government employer.",
        "swapped": "On the BMFOL display, employment code G identifies a Federal Employer."})
    assert results["right"]["status"] == "supported", results["right"]
    assert results["swapped"]["status"] == "unsupported", results["swapped"]
    assert "code 'G' has another meaning" in results["swapped"]["citations"][0]["reason"]
