"""Issue 23, item 1: a question that names a numbered part of a document ("§ 35a", "čl. IV",
"section 3.4", "Item 1A", "Note 9") gets that part first, on real documents as the pipeline
parses, cleans and chunks them (the Czech amending law 270/2025, NIST CSF 1.1, the Galaxy Gaming
10-K), on real PostgreSQL with the real model; never across the caller's groups; a number that
names no part (a year, an amount) changes nothing; hostile references cost nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import fresh_database

from rag_pipeline import store
from rag_pipeline.chunking.chunks import chunk_elements, cleaned_text
from rag_pipeline.chunking.document_identity import document_identity
from rag_pipeline.cleaning.clean import clean_elements
from rag_pipeline.parsing import parse_document
from rag_pipeline.retrieval import search as retrieval
from rag_pipeline.retrieval.section_refs import MAX_REFS, reference_keys
from rag_pipeline.store import database, text_search

CZECH_LAW = "pdf/cz_zakon_270-2025_novela_trestniho_zakoniku.pdf"
NIST = "pdf/nist_csf_v1.1_2018-04-16.pdf"
FILING = "html/sec_10k_galaxy_gaming_2021.html"


def _part(path: list[str], ord_: int, uri: str) -> bool:
    """The chunks each document contributes (embedding all 1,050 would only slow the test): the
    parts the questions name, their siblings and neighbours with the same numbers in other kinds."""
    joined = " > ".join(path)
    if uri == CZECH_LAW:
        return 250 <= ord_ <= 400  # Čl. III (tail) to Čl. XIV: § label lines, roman articles
    if uri == NIST:
        return joined.startswith(("2.0", "3.0", "1.0"))
    return any(f"ITEM {n}." in joined for n in ("1", "1A", "1B", "2", "3", "7", "7A", "9A")) or "NOTE" in joined


@pytest.fixture(scope="module")
def index(pg_server_url: str, embedder, corpus_dir: Path) -> Iterator[str]:
    """The three documents, the filing readable by `finance` only, the rest by `staff`."""
    with fresh_database(pg_server_url) as url, database.connect(url) as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
        store.runs.create_run(conn, "r1", ["corpus"], model_id)
        for uri in (CZECH_LAW, NIST, FILING):
            path = corpus_dir / "docs" / uri
            parsed = parse_document(path.read_bytes(), path.name)
            elements, _ = clean_elements(parsed.elements)
            chunks = [c.to_dict() for c in chunk_elements(elements, embedder.count_tokens, embedder.max_tokens,
                                                         identity=document_identity(parsed.title, elements, uri))]
            kept = [c for c in chunks if _part(c["section_path"], c["ord"], uri)]
            fields = {"model_id": model_id, "acl_groups": ["finance" if uri == FILING else "staff"], "checksum": uri,
                      "language": text_search.detect_language(cleaned_text(elements)[0])}
            store.versions.stage_content_version(conn, "r1", "corpus", uri, fields, kept,
                                                 embedder.encode([c["search_text"] for c in kept]))
        store.versions.publish(conn, "r1")
        yield url


HEADINGS = [  # heading -> (family, number, title), as migration 022 parses it
    ("§ 12 Náhrada škody", ["s", "12", "Náhrada škody"]),
    ("§12", ["s", "12", ""]),
    ("7.2.1 Scope of the audit", ["s", "7.2.1", "Scope of the audit"]),
    ("Article 12 – Title", ["a", "12", "Title"]),
    ("Item 1A. Risk Factors", ["i", "1a", "Risk Factors"]),
    ("ITEM 7. MANAGEMENT’S DISCUSSION", ["i", "7", "MANAGEMENT’S DISCUSSION"]),
    ("Note 5 — Leases", ["n", "5", "Leases"]),
    ("Čl. IV", ["a", "iv", ""]),
    ("ČLÁNEK 3 Úvod", ["a", "3", "Úvod"]),
    ("Abschnitt 3 Grundlagen", ["s", "3", "Grundlagen"]),
    ("Artikel 5", ["a", "5", ""]),
    ("3.0 How to Use the Framework", ["s", "3", "How to Use the Framework"]),
    ("PART II — OTHER INFORMATION", ["p", "ii", "OTHER INFORMATION"]),
    ("Kapitel 2 Topologie", ["c", "2", "Topologie"]),
    ("2.3.59-12 Command Code BMFOL Entity Display", ["s", "2.3.59-12", "Command Code BMFOL Entity Display"]),
]
NOT_NUMBERED = ["Introduction", "2019 Annual Report", "ČÁST PRVNÍ", "I. Background", "7", "Appendix A",
                "§ 99999999999999999999", "Notes to Financial Statements", "CIVIL"]


def test_headings_parse_into_number_and_title_and_a_question_names_them_alike(db_url: str) -> None:
    with database.connect(db_url) as conn:
        for heading, parts in HEADINGS:
            assert conn.execute("SELECT rag_section_parts(%s)", (heading,)).fetchone()[0] == parts, heading
            key = f"{parts[0]}:{parts[1]}"
            if not heading[0].isdigit() or parts[1].count(".") >= 2:  # a question's bare "3" names nothing
                assert reference_keys(f"What does {heading} say?")[:1] == [key], heading
        for heading in NOT_NUMBERED:
            assert conn.execute("SELECT rag_section_parts(%s)", (heading,)).fetchone()[0] is None, heading
        # a dotted number belongs to its parents too; a label line of the text is a part of the chunk
        assert conn.execute("SELECT rag_section_keys(%s, %s)", (["7.2.1 Scope"], "body\n\n§ 35a\n\ntext")).fetchone()[0] \
            == ["s:35a", "s:7", "s:7.2", "s:7.2.1"]
        # an exhibit numbered after its section is a part of its own, within that section
        assert conn.execute("SELECT rag_section_keys(%s, '')", (["2.3.59-12 Entity Display"],)).fetchone()[0] \
            == ["s:2", "s:2.3", "s:2.3.59", "s:2.3.59-12"]
        assert reference_keys("What does Exhibit 2.3.59-12 show?") == ["s:2.3.59-12"]


@pytest.mark.parametrize(("question", "groups", "uri", "where"), [
    # §, Czech: the paragraph an amending law inserts is a label line of its text
    ("Co stanoví § 35a o započítání vazby?", "staff", CZECH_LAW, "§ 35a"),
    # article, Czech: roman article numbers
    ("Jaká přechodná ustanovení obsahuje čl. IV?", "staff", CZECH_LAW, "Čl. IV"),
    # dotted decimal, English
    ("What does section 3.4 of the Cybersecurity Framework say?", "staff", NIST, "3.4 Buying Decisions"),
    ("Summarise 2.3 of the framework", "staff", NIST, None),  # a bare two-part number names nothing
    # item and note, English
    ("What does Item 1A say?", "finance", FILING, "ITEM 1A. RISK FACTORS"),
    ("What is in Note 9?", "finance", FILING, "NOTE 9. LEASES"),
])
def test_a_named_part_ranks_first(index: str, embedder, question: str, groups: str, uri: str, where: str | None) -> None:
    with database.connect(index) as conn:
        hits = retrieval.search(conn, embedder, question, [groups], k=5)
    assert hits
    if where is None:
        assert all("section_match" not in h.features for h in hits)
        return
    top = hits[0]
    assert top.uri == uri
    assert top.section_path[-1] == where or any(line.strip() == where for line in top.text.splitlines())
    assert top.features["section_match"] == 1.0


def test_a_named_part_the_caller_may_not_read_returns_nothing_of_it(index: str, embedder) -> None:
    with database.connect(index) as conn:
        hits = retrieval.search(conn, embedder, "What does Item 1A of the Galaxy Gaming 10-K say?", ["staff"], k=20)
        assert hits and all(h.uri != FILING for h in hits)
        assert all(h.features.get("section_match", 0) == 0 for h in hits)  # nothing staff reads is an Item 1A
        assert retrieval.search(conn, embedder, "Item 1A", ["nobody"], k=20) == []


@pytest.mark.parametrize("question", [
    "How many full-time employees did Galaxy Gaming have in 2021?",
    "What were the revenues of $19,984,378 made of?",
    "Jak se změnil trestní zákoník od 1. ledna 2026?",
])
def test_a_number_that_names_no_part_changes_nothing(index: str, embedder, question: str) -> None:
    assert reference_keys(question) == []
    with database.connect(index) as conn:
        hits = retrieval.search(conn, embedder, question, ["staff", "finance"], k=10, log=False)
        view = store.search.View()
        prepared = store.search_prepare.prepare(conn, question, ["finance", "staff"], view)
        rows = store.search.search_chunks(conn, embedder.encode([question])[0], question, ["finance", "staff"],
                                          prepared.model["id"], 50, view, plan=prepared.plan, terms=prepared.terms)
    plain = retrieval.rerank_hits(question, [retrieval._hit(r) for r in rows])  # the search without the branch
    assert [h.chunk_id for h in hits] == [h.chunk_id for h in plain[:10]]
    assert all("section_match" not in h.features for h in hits)


def test_hostile_references_cost_nothing(index: str, embedder) -> None:
    many = "§§ " + ", ".join(str(n) for n in range(1, 501))
    assert len(reference_keys(many)) == MAX_REFS  # 500 numbers are not 500 parts
    assert reference_keys("§") == [] and reference_keys("§ 99999999999999999999") == []
    assert reference_keys("§ ３５a") == ["s:35a"]  # fullwidth digits are digits (NFKC)
    assert reference_keys("§ ٣٥") == []  # other scripts' digits are not read as section numbers
    with database.connect(index) as conn:
        for question in ("§", "§ 99999999999999999999", "§ ３５a", "§ ٣٥", many[:1990], "čl. " * 400,
                         "Item 1A " * 200):
            hits = retrieval.search(conn, embedder, question, ["staff"], k=5)
            assert all(h.uri != FILING for h in hits)
        fullwidth = retrieval.search(conn, embedder, "Co stanoví § ３５a?", ["staff"], k=3)
        assert fullwidth[0].features.get("section_match") == 1.0


def test_a_version_number_is_told_by_the_word_just_before_it() -> None:
    """A bare dotted number right after "version" (or "release", "v", ...) is a version, not a
    section; the word is looked for in the few characters before each number (VERSION_REACH),
    not in the whole question, so 2,000 characters of "version 1.2.3" cost no more than prose."""
    from rag_pipeline.retrieval.section_refs import VERSION_REACH

    assert reference_keys("What changed in version 2.3.4 and in 4.1.2?") == ["s:4.1.2"]
    assert reference_keys("Is the conversion 1.2.3 documented?") == ["s:1.2.3"]  # "version" inside a word
    assert reference_keys("version" + " " * VERSION_REACH + "1.2.3") == ["s:1.2.3"]  # too far to be its word
    assert reference_keys(("version 1.2.3 " * 200)[:2000]) == []
    assert reference_keys(("see 1.2.3 " * 200)[:2000]) == ["s:1.2.3"]
