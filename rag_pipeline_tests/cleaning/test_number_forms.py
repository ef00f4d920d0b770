"""Numbers in Unicode's number forms (cleaning/safety/number_forms.py): fractions, the fraction
and division slashes, superscript powers, subscripts and Roman numeral characters are indexed as
plain text writes them, in documents and questions alike. On real PostgreSQL the typeset form
and the typed one had different terms ("½" none at all, "3⁄8" the terms 3 and 8, "10⁶" only 10);
after the clean step they have the same. The citation checker reads "10⁶" as 10^6, not 106.
End to end: a synced document that prints its figures so is found by the figures as typed."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import query, sync_folder

from rag_pipeline.answers import figures
from rag_pipeline.cleaning.safety import as_indexed, neutralise_controls
from rag_pipeline.cleaning.safety.number_forms import plain_numbers
from rag_pipeline.parsing.superscripts import marked
from rag_pipeline.retrieval import search as retrieval
from rag_pipeline.store import database

# (as a typeset document prints it, as a reader types it)
PAIRS = [
    ("Use a 3\u20448 inch bolt.", "Use a 3/8 inch bolt."),  # fraction slash
    ("Use a 3\u22158 inch bolt.", "Use a 3/8 inch bolt."),  # division slash
    ("Staff pay \u00bd of the fee.", "Staff pay 1/2 of the fee."),
    ("The drive takes 1\u00bd hours.", "The drive takes 1 1/2 hours."),  # one and a half, not 11/2
    ("\u00bc \u00be \u2153 \u215e", "1/4 3/4 1/3 7/8"),
    ("About 10\u2076 cells per ml.", "About 10^6 cells per ml."),  # a power, as superscript formatting is marked
    ("A dose of 10\u207b\u00b3 M.", "A dose of 10^-3 M."),  # a signed power is no range "10-3"
    ("An area of 120 m\u00b2.", "An area of 120 m^2."),
    ("Emissions of CO\u2082 and H\u2082O.", "Emissions of CO2 and H2O."),
    ("Chapter \u216b, annex \u2173.", "Chapter XII, annex iv."),
]


def _terms(conn, text: str, config: str = "simple") -> list[str]:
    found = conn.execute("SELECT array(SELECT lexeme FROM unnest(to_tsvector(%s::regconfig, %s)) ORDER BY lexeme)",
                         (config, text)).fetchone()[0]
    return list(found)


@pytest.mark.parametrize(("printed", "typed"), PAIRS)
def test_number_forms_are_indexed_as_typed(db_url: str, printed: str, typed: str) -> None:
    assert neutralise_controls(printed) == (typed, 0)  # the same text to a reader: nothing counted
    assert as_indexed(printed) == typed  # a question pasted from the document asks what the typed one asks
    with database.connect(db_url) as conn:
        assert _terms(conn, printed) != _terms(conn, typed), "no case: PostgreSQL already reads it as typed"
        for config in ("simple", "english", "simple_unaccent"):
            assert _terms(conn, as_indexed(printed), config) == _terms(conn, typed, config)


@pytest.mark.parametrize(("before", "superscript", "shown"), [
    ("10", "-3", "^-3"), ("10", "\u22123", "^\u22123"), ("x", "+1", "^+1"),  # signed powers
    ("word", "-", "-"), ("10 ", "-3", "-3"), ("", "-3", "-3"),  # no digit, or apart already
])
def test_a_signed_superscript_is_marked_as_a_power(before: str, superscript: str, shown: str) -> None:
    assert marked(before, superscript) == shown


def test_text_without_number_forms_is_left_as_it_is() -> None:
    kept = "1990\u20132000, \u2212 5 \u00b0C, 3/8, x^2, \u2460 item, n\u00ba 5, \u2074 alone?"
    assert plain_numbers("3/8 inch and 10^6") == "3/8 inch and 10^6"
    assert neutralise_controls(kept)[0] == kept.replace("\u2074", "4")  # a superscript after a space: its digit


def test_the_citation_checker_reads_a_power_as_a_power() -> None:
    assert figures.normalise("10\u2076 cells") == figures.normalise("10^6 cells") == "1000000 cells"
    assert figures.normalise("10\u2076 cells") != figures.normalise("106 cells")
    assert figures.normalise("a 3\u20448 inch bolt") == figures.normalise("a 3/8 inch bolt")
    assert figures.normalise("1\u00bd hours") == figures.normalise("1 1/2 hours")


def test_hostile_and_huge_number_forms_are_read_in_one_pass() -> None:
    text = "1\u00bd\u00b2\u2082\u2044\u216b" * 400_000  # 2.4 M characters, every one a number form
    cleaned = as_indexed(text)
    assert cleaned == "1 1/2^22/XII" * 400_000
    assert as_indexed(cleaned) == cleaned  # settled: cleaning twice changes nothing
    supers = "10" + "\u2070" * 1_000_000  # one superscript run of a million digits
    assert as_indexed(supers) == "10^" + "0" * 1_000_000


DOCUMENT = ("# Fitting guide\n\nEach bracket takes a 3\u20448 inch bolt tightened by \u00bd turn.\n\n"
            "The sensor reads CO\u2082 up to 10\u2074 ppm.\n")


@pytest.fixture
def synced(tmp_path: Path, db_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    sync_folder(capsys, tmp_path, db_url, {"fitting.md": DOCUMENT,
                                           "parking.md": "# Parking\n\nVisitors park behind the warehouse in row 3.\n"})
    return db_url


def test_a_synced_document_is_found_by_its_figures_as_typed(synced: str, embedder) -> None:
    stored = query(synced, "SELECT string_agg(text, ' ') FROM chunks c JOIN document_versions v ON v.id = c.version_id"
                           " JOIN documents d ON d.id = v.document_id WHERE d.uri = 'fitting.md'")[0][0]
    assert "3/8 inch bolt" in stored and "1/2 turn" in stored and "CO2" in stored and "10^4 ppm" in stored
    with database.connect(synced) as conn:
        for question in ("3/8", "CO2", "3\u20448 inch", "CO\u2082"):  # typed, and pasted as printed
            hits = retrieval.search(conn, embedder, question, ["all-staff"], k=5, mode="fulltext")
            assert [h.uri for h in hits] == ["fitting.md"], question
