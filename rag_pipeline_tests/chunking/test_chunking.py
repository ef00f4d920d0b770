"""Chunking by structure, bounded by the real model's tokenizer and maximum input."""

from __future__ import annotations

import re

import pytest

from rag_pipeline.chunking.chunks import chunk_elements, cleaned_text, split_chunk
from rag_pipeline.parsing.types import Element


def _doc() -> list[Element]:
    return [
        Element("heading", "Travel Policy", page=1, level=1),
        Element("paragraph", "This policy applies to all staff.", page=1),
        Element("heading", "2 Approval", page=1, level=2),
        Element("paragraph", "A business trip abroad must be approved in advance by the head of department.", page=1),
        Element("heading", "2.1 Exceptions", page=2, level=3),
        Element("paragraph", "Emergencies may be approved afterwards.", page=2),
        Element("heading", "3 Per diem rates", page=2, level=2),
        Element("table", "| City | Hotel |\n| --- | --- |\n| Berlin | 140 |", page=3),
    ]


def test_section_paths_pages_and_offsets_point_into_the_cleaned_text(embedder) -> None:
    elements = _doc()
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens)
    text, _ = cleaned_text(elements)
    paths = [c.section_path for c in chunks]
    assert ["Travel Policy", "2 Approval"] in paths
    assert ["Travel Policy", "2 Approval", "2.1 Exceptions"] in paths
    assert ["Travel Policy", "3 Per diem rates"] in paths  # level 2 after level 3 pops back up
    for chunk in chunks:
        assert text[chunk.char_start : chunk.char_end] == chunk.text
    table = next(c for c in chunks if "Berlin" in c.text)
    assert (table.page_start, table.page_end) == (3, 3)
    approval = next(c for c in chunks if "head of department" in c.text)
    assert approval.search_text.startswith("Travel Policy > 2 Approval\n")


def test_token_counts_are_the_models_and_never_exceed_its_maximum(embedder) -> None:
    long_paragraph = " ".join(f"Sentence number {i} explains a rule about freight documents." for i in range(400))
    elements = [Element("heading", "Long", level=1), Element("paragraph", long_paragraph)]
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens)
    assert len(chunks) > 5
    for chunk in chunks:
        assert chunk.token_count == embedder.count_tokens([chunk.search_text])[0]
        assert chunk.token_count <= embedder.max_tokens
    # nothing lost: the chunks cover every sentence
    joined = " ".join(c.text for c in chunks)
    assert "Sentence number 0 " in joined and "Sentence number 399 " in joined


def test_big_tables_split_between_rows_never_inside_one(embedder) -> None:
    rows = [f"| Item {i} | Warehouse {i % 7} | {i * 13} kg |" for i in range(300)]
    table = "| Item | Place | Weight |\n| --- | --- | --- |\n" + "\n".join(rows)
    chunks = chunk_elements([Element("table", table, page=1)], embedder.count_tokens, embedder.max_tokens)
    assert len(chunks) > 1
    for chunk in chunks:
        for line in chunk.text.strip("\n").split("\n"):
            assert line.startswith("|") and line.endswith("|"), line
        assert chunk.token_count <= embedder.max_tokens


def test_hostile_input_unbroken_text_and_endless_headings(embedder) -> None:
    blob = "x" * 50_000  # one "word": tokenises to [UNK] but must still be cut to readable chunks
    heading = "H " * 2000
    elements = [Element("heading", heading, level=1), Element("paragraph", blob)]
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens)
    assert sum(c.text.count("x") for c in chunks) == 50_000
    assert sum(c.text.split().count("H") for c in chunks) == 2000  # the heading is read as text too
    assert all(len(c.text) <= 4000 and c.token_count <= embedder.max_tokens for c in chunks)


def test_identical_text_gives_identical_hashes_so_embeddings_can_be_reused(embedder) -> None:
    a = chunk_elements(_doc(), embedder.count_tokens, embedder.max_tokens)
    edited = _doc()
    edited[5] = Element("paragraph", "Emergencies need a phone call to the head of department.", page=2)
    b = chunk_elements(edited, embedder.count_tokens, embedder.max_tokens)
    same = {c.content_hash for c in a} & {c.content_hash for c in b}
    assert len(same) == len(a) - 1  # only the edited section's chunk changed


def test_repeated_empty_headings_each_keep_their_own_text_and_offsets(embedder) -> None:
    elements = [
        Element("heading", "Chapter 1", level=1),
        Element("heading", "Exercises", level=2),
        Element("heading", "Chapter 2", level=1),
        Element("heading", "Exercises", level=2),
    ]
    text, spans = cleaned_text(elements)
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens)
    exercises = [c for c in chunks if c.text == "Exercises"]
    assert [(c.char_start, c.char_end) for c in exercises] == [spans[1], spans[3]]
    assert [c.section_path for c in exercises] == [["Chapter 1"], ["Chapter 2"]]


def _report(title: str) -> list[Element]:
    return [
        Element("heading", title, level=1),
        Element("heading", "1 Scope", level=2),
        Element("paragraph", "The audit covers every warehouse in the northern region.", page=1),
        Element("heading", "2 Findings", level=2),
        Element("paragraph", "Two of nine warehouses kept no record of returned goods.", page=2),
    ]


def test_a_heading_with_no_body_lives_in_the_paths_under_it_not_in_a_chunk_of_its_own(embedder) -> None:
    elements = _report("Warehouse audit") + [Element("heading", "Appendix", level=2)]
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens)
    texts = [c.text for c in chunks]
    assert "Warehouse audit" not in texts  # said by every chunk under it
    assert all(c.search_text.startswith("Warehouse audit > ") for c in chunks if c.text != "Appendix")
    assert "Appendix" in texts  # ends the document: nothing under it says it, so it keeps its chunk
    # a bodyless heading followed by a sibling, not a child, keeps its chunk too
    siblings = [Element("heading", "Part A", level=2), Element("heading", "Part B", level=2),
                Element("paragraph", "Part B holds the text.")]
    assert "Part A" in [c.text for c in chunk_elements(siblings, embedder.count_tokens, embedder.max_tokens)]


def test_an_absurdly_long_bodyless_heading_keeps_its_words_findable(embedder) -> None:
    """A heading too long for the paths under it (they keep only their own heading) is not
    dropped: its words stay in a chunk of its own."""
    heading = " ".join(f"clause{i}" for i in range(400))
    elements = [Element("heading", heading, level=1), Element("heading", "1 Scope", level=2),
                Element("paragraph", "The scope is the northern region.")]
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens)
    joined = " ".join(c.search_text for c in chunks)
    assert "clause0" in joined and "clause399" in joined
    assert all(c.token_count <= embedder.max_tokens for c in chunks)


def _mixed_document() -> list[Element]:
    """Paragraphs, a long table, a sentence-free run of words and an unbroken "word": each way a
    chunk can be cut."""
    rows = "\n".join(f"| Route {i} | {100 + i} EUR | economy class, receipts required |" for i in range(40))
    return [
        Element("heading", "Travel Handbook", page=1, level=1),
        Element("heading", "4 Costs and limits for every journey", page=1, level=2),
        Element("paragraph", " ".join(f"Rule {i} says a traveller keeps every receipt." for i in range(30)), page=1),
        Element("table", "| Route | Limit | Notes |\n| --- | --- | --- |\n" + rows, page=2, page_end=3),
        Element("paragraph", " ".join(["freight"] * 300), page=3),
        Element("paragraph", "x" * 9000, page=4),
    ]


@pytest.mark.parametrize("limit", [128, 64, 32])
def test_a_chunk_split_for_a_smaller_limit_keeps_every_word_its_path_and_offsets(embedder, limit: int) -> None:
    """What a model migration to a model that reads fewer tokens does with the stored chunks:
    every piece fits, the words come back in order, each piece keeps the section path and a
    page span inside its chunk's, and its offsets still point into the cleaned text."""
    elements = _mixed_document()
    text, _ = cleaned_text(elements)
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens, identity="Travel Handbook 2026")
    pieces = []
    for chunk in chunks:
        cut = split_chunk(chunk, embedder.count_tokens, limit, len(pieces))
        assert [p.ord for p in cut] == list(range(len(pieces), len(pieces) + len(cut)))
        for piece in cut:
            assert piece.section_path == chunk.section_path and text[piece.char_start : piece.char_end] == piece.text
            assert chunk.char_start <= piece.char_start < piece.char_end <= chunk.char_end
            assert (piece.page_start, piece.page_end) == (chunk.page_start, chunk.page_end)
            assert piece.search_text == piece.search_prefix + piece.text
            assert piece.search_prefix in (chunk.search_prefix, "")
        pieces.extend(cut)
    counts = embedder.count_tokens([p.search_text for p in pieces])
    assert max(counts) <= limit and counts == [p.token_count for p in pieces]
    assert re.findall(r"\S+", " ".join(p.text for p in pieces)) == re.findall(r"\S+", " ".join(c.text for c in chunks))
    table_rows = [line for p in pieces for line in p.text.splitlines() if re.fullmatch(r"\| Route \d+ \|.*\|", line)]
    assert len(table_rows) == 40, "a table row is never cut in two"
    assert len(pieces) > len(chunks)


def test_a_chunk_that_fits_is_kept_as_it_is(embedder) -> None:
    chunk = chunk_elements(_doc(), embedder.count_tokens, embedder.max_tokens)[0]
    [kept] = split_chunk(chunk, embedder.count_tokens, chunk.token_count, 7)
    assert kept.ord == 7 and {**kept.to_dict(), "ord": chunk.ord} == chunk.to_dict()
