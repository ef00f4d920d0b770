"""A table's caption and the lead-in of a table or a list share a chunk with what they introduce
(chunking/keep_with_next.py), with the real model's tokenizer: where packing would have left the
caption as the last words of the chunk before, the table's chunk starts with it. Nothing is lost
or reordered, no chunk passes the model's maximum, and ordinary paragraphs pack as before."""

from __future__ import annotations

import pytest

from rag_pipeline.chunking.chunks import chunk_elements, cleaned_text
from rag_pipeline.chunking.keep_with_next import keeps_with_next
from rag_pipeline.parsing.types import Element

_FILLER = " ".join(f"Member states reported enrolment figures for cohort {i} to the commission." for i in range(14))
_TABLE = "| Country | Rate |\n| --- | --- |\n" + "\n".join(f"| Country {i} | {40 + i}.5 % |" for i in range(30))


def _chunks(elements: list[Element], embedder) -> list:
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens)
    text, spans = cleaned_text(elements)
    body = [text[s:e] for (s, e), element in zip(spans, elements, strict=True) if element.kind != "heading"]
    assert "".join("".join(c.text.split()) for c in chunks) == "".join("".join(b.split()) for b in body)  # all, in order
    assert all(c.token_count <= embedder.max_tokens for c in chunks)
    return chunks


def _holding(chunks: list, words: str):
    return next(c for c in chunks if words in c.text)


@pytest.mark.parametrize("intro", [
    Element("caption", "Table 2.1: Early school leavers by country, 2022 (%)"),
    Element("paragraph", "Table 2.1 Early school leavers by country, 2022 (%)"),
    Element("paragraph", "Tabelle 4 – Frühe Schulabgänger nach Land"),
    Element("paragraph", "The shares of early school leavers in 2022 were as follows:"),
])
def test_a_caption_or_lead_in_moves_to_the_chunk_of_its_table(embedder, intro: Element) -> None:
    elements = [Element("heading", "Early leavers", level=1), Element("paragraph", _FILLER), intro,
                Element("table", _TABLE)]
    chunks = _chunks(elements, embedder)
    rows = _holding(chunks, "Country 0 |")
    assert rows.text.startswith(intro.text) and "| Country | Rate |" in rows.text  # caption, header, first rows
    assert intro.text not in _holding(chunks, "cohort 0 ").text


def test_a_lead_in_moves_to_the_chunk_of_its_list(embedder) -> None:
    items = [Element("list_item", f"Receipts for item {i} of the claim must be kept for ten years.") for i in range(12)]
    intro = Element("paragraph", "A claim for travel costs must include:")
    chunks = _chunks([Element("heading", "Claims", level=1), Element("paragraph", _FILLER), intro, *items], embedder)
    assert intro.text in _holding(chunks, "item 0 of").text


def test_ordinary_paragraphs_and_figure_captions_introduce_nothing(embedder) -> None:
    for before in ("Enrolment rose in every member state over the decade.",
                   "Figure 3: Enrolment by year",
                   "A long paragraph ending in a colon is text of its own: " + "more words here " * 40 + "see below:"):
        elements = [Element("heading", "Early leavers", level=1), Element("paragraph", _FILLER),
                    Element("paragraph", before), Element("table", _TABLE)]
        assert not keeps_with_next(elements[2], elements[3])
        _chunks(elements, embedder)


def test_a_split_tables_caption_header_and_first_rows_share_a_chunk(embedder) -> None:
    """A table split into row groups: its caption, header row and rule go with its first rows; a
    caption too long to fit beside any row stays where it was, nothing lost."""
    huge = "| Country | Rate |\n| --- | --- |\n" + "\n".join(f"| Country {i} | {i}.5 % |" for i in range(400))
    caption = Element("caption", "Table 9: Rates")
    chunks = _chunks([Element("heading", "Rates", level=1), Element("paragraph", _FILLER), caption,
                      Element("table", huge)], embedder)
    first_rows = _holding(chunks, "Country 0 |").text
    assert "Table 9: Rates\n\n| Country | Rate |\n| --- | --- |\n| Country 0 |" in first_rows
    wide = Element("caption", "Table 9: " + "税率表" * 120)  # a token a character: more than the input
    assert keeps_with_next(wide, Element("table", huge))
    _chunks([Element("heading", "Rates", level=1), Element("paragraph", _FILLER), wide, Element("table", huge)], embedder)


def test_two_thousand_captioned_tables_lose_no_word_and_none_is_left_behind(embedder) -> None:
    elements = [Element("heading", "Annex", level=1)]
    for i in range(2_000):
        elements += [Element("paragraph", f"Notes on series {i}: " + "values are provisional. " * (i % 7)),
                     Element("caption", f"Table A.{i}: Series {i}"),
                     Element("table", "| Year | Value |\n| --- | --- |\n" + "\n".join(f"| {y} | {i * y} |" for y in range(2000, 2000 + i % 9)))]
    chunks = _chunks(elements, embedder)
    for chunk in chunks:
        assert not chunk.text.rstrip().split("\n")[-1].startswith("Table A."), chunk.text


def test_the_eu_reports_captions_lead_their_tables(corpus_dir, embedder) -> None:
    """The EU education report (ICDAR 2013, eu-012): "Table 1" and "Table 3" ended the chunk
    before their tables; each now starts the chunk holding its header row and first rows.
    "Table 4" and its table do not fit one chunk together, so it stays where it was."""
    from rag_pipeline_tests.chunking.test_real_documents_chunks import chunks_of

    _, chunks = chunks_of(corpus_dir, "pdf/icdar2013_eu-012.pdf")
    for caption, first_row in (("Table 1: Real GDP growth", "| Finland |"), ("Table 3: Total unemployment", "| 2000 |")):
        chunk = _holding(chunks, caption)
        assert chunk.text.startswith(caption), chunk.text[:80]
        assert "| --- |" in chunk.text and first_row.split()[1] in chunk.text
