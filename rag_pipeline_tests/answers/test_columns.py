"""A figure read from the wrong column of a table row (answers/columns.py): "13 were temporary
layoffs" where 13 stands under "Not Identified Layoff" and the row's temporary layoffs are 2 is
reported with both headers named; a faithful reading, a tie, a row the claim does not name, a
year, and hostile tables decide nothing. A table's header row ("Not Identified", "Temporary"
beside "Permanent") is no statement for the polarity check (support.py). The last test verifies
both through the CLI on a real index with the real model."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from helpers import ANOTHER_DOCUMENT, sync_folder, verify_claims

from rag_pipeline.answers import support
from rag_pipeline.answers.columns import misread
from rag_pipeline.answers.fields import facts

WARN = ("| Summary by Month | Notices | Employees Affected | Permanent Layoff | Temporary Layoff | Not Identified Layoff "
        "| Permanent Closure | Temporary Closure | Not Identified Closure |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
        "| July 2015 | 71 | 8,574 | 30 | 2 | 13 | 25 | 1 | 0 |\n"
        "| August 2015 | 69 | 5,890 | 28 | 2 | 7 | 31 | 0 | 1 |\n")


@pytest.mark.parametrize(("claim", "figure", "rival"), [
    ("Of the July 2015 notices, 13 were temporary layoffs and 25 were permanent closures.", "13", "temporary layoff"),
    ("In August 2015 there were thirty-one permanent layoffs.", "31", "permanent layoff"),
    ("In July 2015, 2 were temporary closures.", "2", "temporary closure"),
])
def test_a_figure_under_another_columns_header_is_named(claim: str, figure: str, rival: str) -> None:
    found = misread(claim, facts(WARN))
    assert [(m.figure, m.rival) for m in found] == [(figure, rival)]
    assert repr(rival) in found[0].describe()


@pytest.mark.parametrize("claim", [
    "In August 2015 the report counts sixty-nine notices affecting 5890 employees, among them twenty-eight "
    "permanent layoffs and thirty-one permanent closures.",
    "For July 2015 the summary by month lists 71 notices, with 8,574 employees affected.",
    "July 2015 had 13 layoffs whose kind was not identified.",
    "In July 2015, 30 were permanent layoffs and 25 permanent closures.",
    "The report lists 13 temporary layoffs in total.",  # no row named: left to the exact-field rule
    "In July 2015 there were 2015 notices.",  # a year is no figure here
    "",
])
def test_a_figure_in_the_column_the_claim_names_stands(claim: str) -> None:
    assert misread(claim, facts(WARN)) == []


@pytest.mark.parametrize("table", [
    "| a | b |\n| --- | --- |\n" + "| x | 1 |\n" * 20_000,
    "| " + " | ".join(f"h{i}" for i in range(3000)) + " |\n|" + " --- |" * 3000 + "\n| x | " + " | ".join("1" * 3000) + " |\n",
    "|" * 100_000,
])
def test_hostile_tables_are_read_in_bounded_time(table: str) -> None:
    """About a second or less each here; the limit is far above that."""
    started = time.perf_counter()
    misread("x 1 h1 h2 " * 300, facts(table))
    assert time.perf_counter() - started < 60


def test_a_tables_header_row_is_no_statement_for_the_polarity_flag() -> None:
    claim = "In August 2015, 69 notices affected 5,890 employees, among them 28 permanent layoffs."
    found = support.sentences(WARN)
    header = next(i for i, s in enumerate(found) if s.startswith("| Summary"))
    assert support._flag(claim, found, [header], {"language": "en", "text": WARN}) == 0.0
    assert support._flag("The firm is not in business.", ["The firm is in business."], [0], {"language": "en"}) == 1.0


def test_verify_names_the_column_through_the_cli(capsys: pytest.CaptureFixture[str], tmp_path: Path, db_url: str) -> None:
    """On a real index, through `verify`: a figure read from its column is supported (the
    header's "Not Identified" and "Temporary" no longer flag it), one given another column's
    meaning is unsupported with both headers named."""
    config = sync_folder(capsys, tmp_path, db_url, {
        "warn.md": "# WARN report\n\nNotices of layoffs and closures received by the state, by month.\n\n" + WARN}
        | ANOTHER_DOCUMENT)
    results = verify_claims(capsys, config, db_url, "How many layoffs were reported in the WARN notices in August 2015?",
                            "warn.md", {
        "right": "In August 2015 the WARN report counts 69 notices affecting 5,890 employees, among them 28 permanent layoffs.",
        "column": "In August 2015 the WARN report counts 7 temporary layoffs."})
    assert results["right"]["status"] == "supported", results["right"]
    assert results["column"]["status"] == "unsupported", results["column"]
    assert "'not identified layoff', not in 'temporary layoff'" in results["column"]["citations"][0]["reason"]
