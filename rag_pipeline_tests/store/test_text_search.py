"""Full-text search that answers questions: OR semantics ranked by BM25, identifiers found,
stop words ignored, each document indexed in its own language's configuration. Real
PostgreSQL (pgvector, unaccent) and the real model."""

from __future__ import annotations

import pytest

from rag_pipeline.retrieval import search as retrieval
from rag_pipeline.store import database, text_search
from rag_pipeline_tests.helpers import index_documents

GROUP = "staff"

DOCS = {
    "travel.md": ("Travel policy", "Business trips abroad must be approved by the head of department before "
                  "any booking is made. Economy class is the rule for flights under six hours."),
    "forms.md": ("Forms", "Expense claims use form EXP-2231. Submit it within 30 days of returning from the trip."),
    "reisen.md": ("Reiserichtlinie", "Dienstreisen ins Ausland müssen vor jeder Buchung von der Abteilungsleitung "
                  "genehmigt werden. Für Flüge unter sechs Stunden gilt die Economy-Klasse."),
    "zakon.md": ("Zákon o účetnictví", "Účetní jednotka je povinna vést účetnictví úplně, průkazným způsobem a "
                 "správně. Účetní záznamy se uchovávají po dobu deseti let od konce účetního období."),
    "canteen.md": ("Canteen", "The canteen on the ground floor opens at noon and serves a vegetarian dish every day."),
}


@pytest.fixture
def indexed(db_url: str, embedder) -> str:
    index_documents(db_url, embedder, DOCS, GROUP)
    return db_url


def _fulltext(db_url: str, embedder, query: str, k: int = 5) -> list[retrieval.Hit]:
    with database.connect(db_url) as conn:
        return retrieval.search(conn, embedder, query, [GROUP], k=k, log=False, mode="fulltext")


def test_language_is_detected_per_document_and_mapped_to_a_stemmed_configuration() -> None:
    assert text_search.document_config(DOCS["travel.md"][1]) == "english"
    assert text_search.document_config(DOCS["reisen.md"][1]) == "german"
    # Czech has no PostgreSQL stemmer: its Hunspell dictionary (migration 029), accent-folded
    assert text_search.document_config(DOCS["zakon.md"][1]) == "rag_czech"
    # too little text (a table of numbers, an empty scan) claims no language
    assert text_search.detect_language("12 | 14 | 18\n19 | 22") is None
    assert text_search.document_config("") == text_search.FALLBACK_CONFIG
    # the floor counts letters anywhere in the sample, however many digits surround them
    digits = " ".join(str(n) for n in range(2000))
    german = "Reisekosten werden erstattet wenn die Reise genehmigt wurde"
    letters = [ch for ch in german if ch.isalpha()]
    assert len(letters) > text_search.MIN_LETTERS
    few = german[: german.index(letters[text_search.MIN_LETTERS - 1])]  # one letter short
    assert text_search.detect_language(f"{digits} {few} {digits}") is None
    assert text_search.detect_language(f"{digits} {german} {digits}") == "de"


def test_language_detection_is_deterministic_and_bounded_on_huge_text() -> None:
    text = DOCS["reisen.md"][1] * 20_000  # about 3 MB
    assert {text_search.detect_language(text) for _ in range(3)} == {"de"}


def test_chunks_store_the_configuration_their_tsvector_was_built_with(indexed: str) -> None:
    with database.connect(indexed) as conn:
        found = dict(conn.execute(
            "SELECT d.uri, c.ts_config::text FROM chunks c JOIN document_versions v ON v.id = c.version_id"
            " JOIN documents d ON d.id = v.document_id").fetchall())
        languages = dict(conn.execute(
            "SELECT d.uri, v.language FROM document_versions v JOIN documents d ON d.id = v.document_id").fetchall())
    assert found["travel.md"] == "english" and found["reisen.md"] == "german"
    assert found["zakon.md"] == "rag_czech"
    assert languages["reisen.md"] == "de"


def test_a_natural_question_finds_the_passage_although_not_every_word_occurs(indexed: str, embedder) -> None:
    # "Who", "needs", "approve", "overseas" do not all occur anywhere: AND semantics found nothing
    hits = _fulltext(indexed, embedder, "Who needs to approve business trips overseas before booking?")
    assert hits and hits[0].uri == "travel.md"


def test_more_and_rarer_matching_terms_rank_higher(indexed: str, embedder) -> None:
    hits = _fulltext(indexed, embedder, "trip expense claim form")
    assert [h.uri for h in hits][:2] == ["forms.md", "travel.md"]
    assert hits[0].features["term_coverage"] > hits[1].features["term_coverage"]


def test_exact_identifiers_and_numbers_are_found_first(indexed: str, embedder) -> None:
    assert _fulltext(indexed, embedder, "which form is EXP-2231")[0].uri == "forms.md"
    assert _fulltext(indexed, embedder, "30 days")[0].uri == "forms.md"


def test_stop_words_alone_match_nothing(indexed: str, embedder) -> None:
    assert _fulltext(indexed, embedder, "the of and is it") == []
    assert _fulltext(indexed, embedder, "What is the canteen?")[0].uri == "canteen.md"


def test_german_question_matches_inflected_german_words(indexed: str, embedder) -> None:
    # "Dienstreise" / "genehmigt" vs "Dienstreisen" / "genehmigen": the german stemmer joins them
    hits = _fulltext(indexed, embedder, "Wer muss eine Dienstreise genehmigen?")
    assert hits and hits[0].uri == "reisen.md"


def test_accents_are_folded_where_no_stemmer_exists_and_forms_meet_their_lemma(indexed: str, embedder) -> None:
    hits = _fulltext(indexed, embedder, "jak dlouho se uchovavaji ucetni zaznamy")
    assert hits and hits[0].uri == "zakon.md"


@pytest.mark.parametrize("hostile", ["'", "a' | b", "!!&|<->()", "\\", "x:* & !y", "' OR 1=1 --", "ä" * 1999])
def test_tsquery_syntax_in_a_question_is_searched_as_text_not_parsed(indexed: str, embedder, hostile: str) -> None:
    hits = _fulltext(indexed, embedder, hostile)
    assert isinstance(hits, list)  # no syntax error, no crash


def test_or_query_quotes_every_lexeme() -> None:
    assert text_search.or_query(["it's", "a\\b", "10-k"]) == "'it''s' | 'a\\\\b' | '10-k'"


def test_every_mode_answers_and_an_unknown_mode_is_refused(indexed: str, embedder) -> None:
    with database.connect(indexed) as conn:
        for mode in retrieval.MODES:
            hits = retrieval.search(conn, embedder, "Who approves business trips abroad?", [GROUP], k=3, log=False, mode=mode)
            assert hits[0].uri == "travel.md", mode
        with pytest.raises(retrieval.QueryError, match="unknown search mode"):
            retrieval.search(conn, embedder, "x", [GROUP], mode="bm42")


def test_fulltext_idf_never_counts_chunks_the_caller_may_not_see(db_url: str, embedder) -> None:
    index_documents(db_url, embedder, DOCS, GROUP)
    with database.connect(db_url) as conn:
        hidden = retrieval.search(conn, embedder, "canteen", ["other-group"], k=5, log=False, mode="fulltext")
    assert hidden == []
