"""Issue 28, item 2: short sibling sections share one chunk, with every heading kept in the
chunk's path or text, never across a top-level section, never over the model's input, and a
numbered part ("2.1 Rates", "§ 12") still found by the question that names it."""

from __future__ import annotations

import pytest
from conftest import fresh_database

from rag_pipeline import store
from rag_pipeline.chunking.chunks import chunk_elements, cleaned_text
from rag_pipeline.chunking.merge import numbered
from rag_pipeline.parsing.types import Element
from rag_pipeline.retrieval import search as retrieval
from rag_pipeline.store import database


def _handbook() -> list[Element]:
    """Two top-level sections of short unnumbered subsections, one numbered part among them."""
    return [
        Element("heading", "Travel Policy", page=1, level=1),
        Element("paragraph", "This policy applies to all staff who travel for work.", page=1),
        Element("heading", "Approval", page=1, level=2),
        Element("paragraph", "A business trip abroad must be approved in advance by the head of department.", page=1),
        Element("heading", "Emergencies", page=2, level=3),
        Element("paragraph", "Emergency trips may be approved afterwards within three working days.", page=2),
        Element("heading", "Booking", page=2, level=2),
        Element("paragraph", "Trains are booked through the travel desk; flights only above 600 km.", page=2),
        Element("heading", "2.1 Rates", page=3, level=2),
        Element("paragraph", "The per diem rate for Berlin is 140 euro.", page=3),
        Element("heading", "Expenses", page=3, level=1),
        Element("paragraph", "Receipts are scanned within a month of the trip.", page=3),
        Element("heading", "Mileage", page=4, level=2),
        Element("paragraph", "Private cars are paid 0.30 euro per kilometre.", page=4),
    ]


def _top_level(elements: list[Element], char: int) -> str:
    """The level-1 heading whose section holds the character at `char` of the cleaned text."""
    _, spans = cleaned_text(elements)
    top = ""
    for element, (start, _) in zip(elements, spans):
        if start > char:
            break
        if element.kind == "heading" and element.level == 1:
            top = element.text
    return top


def test_short_sections_merge_keeping_every_heading_within_one_top_level_section(embedder) -> None:
    elements = _handbook()
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens, identity="Staff handbook")
    text, _ = cleaned_text(elements)
    assert len(chunks) < sum(e.kind != "heading" for e in elements)  # fuller chunks: fewer than sections
    for chunk in chunks:
        assert text[chunk.char_start : chunk.char_end] == chunk.text
        tops = {_top_level(elements, chunk.char_start), _top_level(elements, chunk.char_end - 1)}
        assert len(tops) == 1, (chunk.text, tops)  # never across a top-level section
        assert chunk.section_path[0] == tops.pop()
    for heading in (e.text for e in elements if e.kind == "heading"):
        holders = [c for c in chunks if heading in c.section_path or heading in c.text.split("\n\n")]
        assert holders, f"heading {heading!r} lost"
    merged = next(c for c in chunks if "head of department" in c.text)
    assert merged.section_path == ["Travel Policy"]
    assert "Approval\n\nA business trip" in merged.text and "Emergencies\n\nEmergency trips" in merged.text
    assert "Booking" in merged.text  # a sibling after a deeper subsection joins too
    assert (merged.page_start, merged.page_end) == (1, 2)
    assert merged.search_text.startswith("Staff handbook\nTravel Policy\n")


def test_a_numbered_part_keeps_its_own_chunk_and_path(embedder) -> None:
    chunks = chunk_elements(_handbook(), embedder.count_tokens, embedder.max_tokens)
    rates = [c for c in chunks if "Berlin" in c.text]
    assert len(rates) == 1
    assert rates[0].section_path == ["Travel Policy", "2.1 Rates"]
    assert rates[0].text == "The per diem rate for Berlin is 140 euro."  # exactly its former chunk
    for heading in ("2.1 Rates", "§ 12 Náhrada škody", "Item 1A. Risk Factors", "ČLÁNEK IV", "Article 5",
                    "Note 9 — Leases", "7 Appendix", "Section 3"):
        assert numbered(heading), heading
    for heading in ("Approval", "Introduction", "Civil rights", "Item", "Part of the plan"):
        assert not numbered(heading), heading


def test_merged_chunks_never_exceed_the_budget_and_lose_nothing(embedder) -> None:
    elements = [Element("heading", "Glossary", level=1)]
    for i in range(300):  # many short siblings, some longer, some empty headings
        elements.append(Element("heading", f"Term {chr(65 + i % 26)}{i}", level=2))
        if i % 7:
            elements.append(Element("paragraph", f"Definition {i}: " + "a word of the glossary " * (i % 11)))
    for target in (None, 64):
        chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens, target_tokens=target)
        budget = target or embedder.max_tokens
        for chunk in chunks:
            assert chunk.token_count == embedder.count_tokens([chunk.search_text])[0]
            assert chunk.token_count <= embedder.max_tokens
            assert len(chunk.text) <= 4000
            if "\n\nTerm " in chunk.text:  # a merged chunk fits the target, its prefix included
                assert chunk.token_count <= budget
        joined = "\n\n".join(c.text for c in chunks)
        for i in range(300):
            assert f"Term {chr(65 + i % 26)}{i}" in joined or any(f"Term {chr(65 + i % 26)}{i}" in c.section_path
                                                                   for c in chunks)
            if i % 7:
                assert f"Definition {i}:" in joined
        assert len(chunks) < 300
        assert [c.ord for c in chunks] == list(range(len(chunks)))


def test_long_sections_still_split_and_preamble_never_joins_a_heading(embedder) -> None:
    long_text = " ".join(f"Sentence {i} states one rule about freight papers." for i in range(200))
    elements = [
        Element("paragraph", "Preamble before any heading."),
        Element("heading", "Rules", level=1),
        Element("heading", "Short", level=2),
        Element("paragraph", "A short section."),
        Element("heading", "Long", level=2),
        Element("paragraph", long_text),
        Element("heading", "After", level=2),
        Element("paragraph", "Another short section."),
    ]
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens)
    assert chunks[0].text == "Preamble before any heading." and chunks[0].section_path == []
    long_chunks = [c for c in chunks if "freight papers" in c.text]
    assert len(long_chunks) > 3 and all(c.section_path == ["Rules", "Long"] for c in long_chunks)
    assert not any("A short section." in c.text for c in long_chunks)


@pytest.mark.parametrize("depth", [3, 200])
def test_hostile_structure_deep_nesting_and_thousands_of_headings(embedder, depth: int) -> None:
    elements = []
    for i in range(depth):
        elements += [Element("heading", f"Level {i}", level=i + 1), Element("paragraph", f"Body {i}.")]
    elements += [Element("heading", "x" * 5000, level=2), Element("paragraph", "Under a huge heading.")]
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens)
    joined = "\n\n".join(c.text for c in chunks)
    assert all(f"Body {i}." in joined for i in range(depth)) and "Under a huge heading." in joined
    assert all(c.token_count <= embedder.max_tokens for c in chunks)


def test_section_references_still_find_the_numbered_part(pg_server_url: str, embedder) -> None:
    """A question naming "section 2.1" gets the chunk of "2.1 Rates" first, on real PostgreSQL
    (migration 022's keys), with the merged sections beside it in the same index."""
    elements = _handbook()
    chunks = [c.to_dict() for c in chunk_elements(elements, embedder.count_tokens, embedder.max_tokens)]
    with fresh_database(pg_server_url) as url, database.connect(url) as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
        store.runs.create_run(conn, "r1", ["docs"], model_id)
        fields = {"model_id": model_id, "acl_groups": ["staff"], "checksum": "h", "language": "english"}
        store.versions.stage_content_version(conn, "r1", "docs", "handbook.md", fields, chunks,
                                             embedder.encode([c["search_text"] for c in chunks]))
        store.versions.publish(conn, "r1")
        hits = retrieval.search(conn, embedder, "What does section 2.1 say?", ["staff"], k=3, log=False)
        assert hits[0].section_path == ["Travel Policy", "2.1 Rates"]
        hits = retrieval.search(conn, embedder, "Who approves emergency trips abroad?", ["staff"], k=3, log=False)
        assert "Emergencies\n\nEmergency trips" in hits[0].text
