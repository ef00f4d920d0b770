"""Characters that render as nothing inside a word (soft hyphens, bidi marks, the grapheme joiner,
Hangul fillers, variation selectors after letters, the unassigned default-ignorables): each one
split or changed the word's full-text term, so "Vernich\\u00adtungs\\u00adlager" on German
Wikipedia was never found by the word a reader types, and a question pasted with a bidi mark
matched nothing. Checked on real PostgreSQL terms, on the shared corpus, and end to end: a sync
of such a document and searches with such questions, through the real pipeline and model."""

from __future__ import annotations

import unicodedata
from collections import Counter
from pathlib import Path

import pytest
from helpers import query, sync_folder

from rag_pipeline.answers import figures
from rag_pipeline.cleaning.clean import make_safe
from rag_pipeline.cleaning.safety import as_indexed, neutralise_controls
from rag_pipeline.parsing import parse_document
from rag_pipeline.retrieval import search as retrieval
from rag_pipeline.store import database

# Every code point Unicode lists as Default_Ignorable (DerivedCoreProperties) outside the cases
# that have a job in place (tested below), one from each range
REMOVED_IN_A_WORD = [
    "\u00ad", "\u034f", "\u061c", "\u115f", "\u1160", "\u17b4", "\u17b5", "\u180b", "\u180c", "\u180d", "\u180e",
    "\u180f", "\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u202a", "\u202e", "\u2060", "\u2064", "\u2065",
    "\u2066", "\u2069", "\u206a", "\u206f", "\u3164", "\ufe00", "\ufe0f", "\ufeff", "\uffa0", "\ufff0", "\ufff8",
    "\U0001bca0", "\U0001bca3", "\U0001d173", "\U0001d17a", "\U000e0001", "\U000e0041", "\U000e0080", "\U000e0100",
    "\U000e01ef", "\U000e01f0", "\U000e0fff",
]

KEPT = [
    "\u2764\ufe0f",  # emoji presentation of a heart
    "1\ufe0f\u20e3 #\ufe0f\u20e3",  # keycaps
    "\u845b\U000e0100\u57ce",  # an ideographic variation sequence (a Japanese family name's glyph)
    "\u0627\u0644\u0639\u0631\u0628\u064a\u0629",  # Arabic
    "\u1820\u180b\u1821",  # Mongolian letter with its free variation selector
    "\u1100\u1160 \u115f\u1161\u11a8",  # old Hangul: conjoining syllables with a filler for the missing jamo
    "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian with its zero-width non-joiner
    "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",  # the flag of Scotland
    "0\ufe00 \u2229\ufe00 \u00a9\ufe0f",  # standardised variants: slashed zero, a math symbol, emoji copyright
]


def _terms(conn, text: str, config: str = "english") -> str:
    return conn.execute("SELECT to_tsvector(%s::regconfig, %s)::text", (config, text)).fetchone()[0]


def test_every_invisible_character_inside_a_word_is_removed_and_the_word_keeps_its_term(db_url: str) -> None:
    with database.connect(db_url) as conn:
        plain = {c: _terms(conn, "compliance officer", c) for c in ("english", "simple_unaccent")}
        for char in REMOVED_IN_A_WORD:
            hidden = f"compli{char}ance offi{char}cer"
            assert _terms(conn, hidden) != plain["english"], f"U+{ord(char):04X} does not split a term: no case"
            cleaned, removed = neutralise_controls(hidden)
            name = unicodedata.name(char, f"U+{ord(char):04X}")
            assert (cleaned, removed) == ("compliance officer", 2), name
            assert {c: _terms(conn, cleaned, c) for c in plain} == plain, name


@pytest.mark.parametrize("text", KEPT)
def test_characters_with_a_job_where_they_stand_are_kept(text: str) -> None:
    assert neutralise_controls(text) == (text, 0)
    assert as_indexed(text) == text


def test_decomposed_letters_are_composed_so_a_stemmer_reads_them_as_typed(db_url: str) -> None:
    decomposed = "Mu\u0308ller bestätigt die Aufbewahrungsfrist, Stras\u0327e, cafe\u0301"  # as macOS writes names
    typed = unicodedata.normalize("NFC", decomposed)
    assert decomposed != typed
    with database.connect(db_url) as conn:
        for config in ("german", "french", "english"):
            assert _terms(conn, decomposed, config) != _terms(conn, typed, config), config
            assert _terms(conn, neutralise_controls(decomposed)[0], config) == _terms(conn, typed, config), config
    assert neutralise_controls(decomposed) == (typed, 0)  # canonically the same text: nothing counted
    assert as_indexed(decomposed) == typed
    # a grapheme joiner between two marks kept them apart; once it is gone they compose
    assert neutralise_controls("e\u034f\u0301") == ("\u00e9", 1)


def test_latin_ligatures_are_spelt_out_as_the_pdf_parser_spells_them(db_url: str) -> None:
    pasted = "The \ufb01nal o\ufb03ce policy: e\ufb04uent, sta\ufb00, \ufb05ate"  # text copied out of a PDF into Word
    plain = "The final office policy: effluent, staff, state"
    assert neutralise_controls(pasted) == (plain, 0)
    with database.connect(db_url) as conn:
        assert _terms(conn, pasted) != _terms(conn, plain)
        assert _terms(conn, as_indexed(pasted)) == _terms(conn, plain)


@pytest.mark.parametrize(("written", "typed"), [
    ("Send it by e\u2011mail.", "Send it by e-mail."),  # Word's non-breaking hyphen
    ("COVID\u201019 cover", "COVID-19 cover"),  # the typographic hyphen of a typeset PDF
    ("\uff30\uff24\uff26\u30d5\u30a1\u30a4\u30eb\u306f \uff12\uff10\uff12\uff15 \u5e74", "PDF\u30d5\u30a1\u30a4\u30eb\u306f 2025 \u5e74"),
    ("\uff29\uff33\uff2f \uff19\uff10\uff10\uff11\uff1a\uff12\uff10\uff11\uff15", "ISO 9001:2015"),
])
def test_typographic_hyphens_and_full_width_letters_are_indexed_as_typed(db_url: str, written: str, typed: str) -> None:
    assert neutralise_controls(written) == (typed, 0)  # the same text to a reader: nothing counted
    assert as_indexed(written) == typed  # a question pasted so asks what the typed one asks
    with database.connect(db_url) as conn:
        assert _terms(conn, written, "simple") != _terms(conn, typed, "simple")
        assert _terms(conn, neutralise_controls(written)[0], "simple") == _terms(conn, typed, "simple")


def test_dashes_and_ideographic_text_that_are_not_ascii_forms_stay() -> None:
    kept = "1990\u20132000 \u2014 a range; \u2212 5 \u00b0C; \u6771\u4eac\u3002\uff61\uff76"  # en/em dash, minus, CJK, half-width katakana
    assert neutralise_controls(kept) == (kept, 0)


def test_a_huge_full_width_text_comes_out_as_ascii() -> None:
    text = "\uff21\uff42\uff43\uff11\uff12\uff13\u2011" * 300_000  # 2.1 M characters
    assert neutralise_controls(text) == ("Abc123-" * 300_000, 0)


def test_only_the_mark_goes_from_right_to_left_text() -> None:
    hebrew = "\u05e9\u05dc\u05d5\u05dd \u200f\u05e2\u05d5\u05dc\u05dd 2026"
    assert neutralise_controls(hebrew) == ("\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd 2026", 1)


def test_a_huge_text_of_invisible_runs_comes_out_as_its_letters_and_stays_so() -> None:
    units = ["a\u00ad", "b\ufe00", "c\u200f", "d\u115f\u1160", "e\u3164", "f\u034f\u034f", "g\U000e0100"]
    text = "".join(units) * 150_000  # 2.4 M characters, 1.5 M of them invisible
    cleaned, removed = neutralise_controls(text)
    assert cleaned == "abcdefg" * 150_000
    assert removed == len(text) - len(cleaned)
    assert neutralise_controls(cleaned) == (cleaned, 0)


def test_german_wikipedia_soft_hyphens_leave_the_corpus_page_as_plain_words(corpus_dir: Path) -> None:
    path = corpus_dir / "docs" / "html" / "wikipedia_de_deutschland.html"
    parsed = parse_document(path.read_bytes(), path.name)
    raw = "\n".join(e.text for e in parsed.elements)
    assert "Vernich\u00adtungs\u00adlagers" in raw  # the page writes its long words so
    safe, counts = make_safe(parsed.elements)
    text = "\n".join(e.text for e in safe)
    assert "\u00ad" not in text and "Vernichtungslagers" in text
    assert counts["control_characters"] >= raw.count("\u00ad")
    # nothing a reader sees is lost: what went is format characters (soft hyphens, the page's BOMs)
    # and the superscript of "km²", now written as typed (cleaning/safety/number_forms.py)
    gone = Counter(raw) - Counter(text)
    assert {unicodedata.category(c) for c in gone if c != "²"} <= {"Cf", "Zs", "Cc"}, gone
    assert text.count("km^2") == raw.count("km²") > 0


def test_a_quoted_span_with_invisible_characters_matches_the_cited_text() -> None:
    cited = "Visitor parking is behind the warehouse in row K."
    assert figures.normalise("Visitor park\u00ading is be\u200fhind the ware\u034fhouse") in figures.normalise(cited)


HTML = (
    "<html><head><title>Datenschutz</title></head><body><main><h1>Datenschutz</h1>"
    "<p>Die Daten&shy;schutz&shy;beauftragte pr&uuml;ft jede Auf&shy;bewahrungs&shy;frist.</p>"
    "<p>The retention&shy;period for visitor logs is ninety days.</p>"
    "<p>Requests go by e&#8209;mail to the \uff24\uff30\uff2f mailbox.</p></main></body></html>"
)


@pytest.fixture
def synced(tmp_path: Path, db_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    sync_folder(capsys, tmp_path, db_url, {
        "datenschutz.html": HTML,
        "parking.md": "# Parking\n\nThe compliance officer assigns visitor parking behind the warehouse.\n"})
    return db_url


def _found(db_url: str, embedder, question: str, mode: str = "fulltext") -> tuple[list[str], int | None]:
    with database.connect(db_url) as conn:
        hits = retrieval.search(conn, embedder, question, ["all-staff"], k=5, mode=mode)
    return [h.uri for h in hits], hits.log_id


def test_a_synced_document_with_soft_hyphens_is_found_by_its_plain_words(synced: str, embedder) -> None:
    stored = query(synced, "SELECT string_agg(text, ' ') FROM chunks c JOIN document_versions v ON v.id = c.version_id"
                           " JOIN documents d ON d.id = v.document_id WHERE d.uri = 'datenschutz.html'")[0][0]
    assert "\u00ad" not in stored and "Datenschutzbeauftragte" in stored
    assert _found(synced, embedder, "Datenschutzbeauftragte")[0] == ["datenschutz.html"]
    assert _found(synced, embedder, "Aufbewahrungsfrist")[0] == ["datenschutz.html"]
    assert _found(synced, embedder, "retention period visitor logs")[0][:1] == ["datenschutz.html"]


def test_a_document_with_a_non_breaking_hyphen_and_full_width_letters_is_found_as_typed(synced: str, embedder) -> None:
    # full text: the page's only term of these is the one its full-width letters spell
    assert _found(synced, embedder, "DPO")[0] == ["datenschutz.html"]
    assert _found(synced, embedder, "\uff24\uff30\uff2f")[0] == ["datenschutz.html"]  # pasted as the page writes it
    assert _found(synced, embedder, "e-mail DPO", mode="hybrid+rerank")[0][:1] == ["datenschutz.html"]


def test_a_question_pasted_with_invisible_characters_finds_what_the_plain_one_finds(synced: str, embedder) -> None:
    pasted = "compli\u00adance offi\u200fcer par\u034fking"  # every word of it split by what cannot be seen
    plain, _ = _found(synced, embedder, "compliance officer parking")
    found, log_id = _found(synced, embedder, pasted)
    assert found == plain == ["parking.md"]
    assert _found(synced, embedder, pasted, mode="hybrid+rerank")[0][:1] == ["parking.md"]
    # the log keeps the question as it came: what was asked is evidence, what was matched follows from it
    assert query(synced, "SELECT query FROM search_log WHERE id = %s", log_id)[0][0] == pasted
    # a question of nothing but invisible characters asks nothing
    assert _found(synced, embedder, "\u00ad\u200f\u3164")[0] == []
