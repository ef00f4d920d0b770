"""Real public documents through parse -> clean -> chunk, checked on the chunks the index would
hold: no running header or page number in chunk text, section paths from the document's own
headings, table rows intact, every chunk within the model's input and its offsets exact."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from rag_pipeline.chunking.chunks import Chunk, chunk_elements, cleaned_text
from rag_pipeline.cleaning.clean import clean_elements
from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.config import ParseLimits

NO_OCR = ParseLimits(ocr=False)


@cache
def _cleaned(path: str) -> tuple[str | None, list]:
    """The document's title property and cleaned elements, parsed once for every test here."""
    parsed = parse_document(Path(path).read_bytes(), Path(path).name, NO_OCR)
    return parsed.title, clean_elements(parsed.elements)[0]


@cache
def _chunks(path: str) -> tuple[str, tuple[Chunk, ...]]:
    from rag_pipeline.embedding import load_embedder

    embedder = load_embedder()
    elements = _cleaned(path)[1]
    text, _ = cleaned_text(elements)
    return text, tuple(chunk_elements(elements, embedder.count_tokens, embedder.max_tokens))


def chunks_of(corpus_dir: Path, relative: str) -> tuple[str, list[Chunk]]:
    text, chunks = _chunks(str(corpus_dir / "docs" / relative))
    return text, list(chunks)


DOCUMENTS = [
    "pdf/nist_csf_v1.1_2018-04-16.pdf",
    "pdf/federal_register_2020-17221.pdf",
    "pdf/ca_warn_report_2015-07_to_2016-03.pdf",
    "pdf/dpr_karpukhin2020_two_column_13p.pdf",
    "docx/docling_word_sample.docx",
    "pptx/docling_powerpoint_sample.pptx",
    "md/openapi_spec_3.0.3.md",
    "html/readability_wikipedia_mozilla_en.source.html",
]


@pytest.mark.parametrize("relative", DOCUMENTS)
def test_chunks_fit_the_model_and_point_into_the_cleaned_text(corpus_dir: Path, relative: str, embedder) -> None:
    text, chunks = chunks_of(corpus_dir, relative)
    assert chunks
    for chunk in chunks:
        assert text[chunk.char_start : chunk.char_end] == chunk.text
        assert 0 < chunk.token_count <= embedder.max_tokens
    assert [c.ord for c in chunks] == list(range(len(chunks)))


def test_nist_chunks_hold_no_running_header_footer_or_page_number(corpus_dir: Path) -> None:
    _, chunks = chunks_of(corpus_dir, "pdf/nist_csf_v1.1_2018-04-16.pdf")
    for chunk in chunks:
        assert "April 16, 2018 Cybersecurity Framework Version 1.1" not in chunk.text
        assert "This publication is available free of charge from" not in chunk.text
        assert not re.fullmatch(r"\s*\d{1,3}\s*", chunk.text)
    paths = [c.section_path for c in chunks]
    assert any(p and p[-1] == "2.1 Framework Core" for p in paths)
    assert any("Appendix B: Glossary" in p for p in paths)


def test_federal_register_chunks_hold_no_running_header(corpus_dir: Path) -> None:
    _, chunks = chunks_of(corpus_dir, "pdf/federal_register_2020-17221.pdf")
    assert not any("Federal Register / Vol. 85, No. 152" in c.text for c in chunks)
    assert not any(c.text.startswith("VerDate Sep<11>2014") for c in chunks)
    assert any(c.section_path and c.section_path[-1] == "Background" for c in chunks)


def test_table_rows_stay_whole_across_chunks(corpus_dir: Path) -> None:
    text, chunks = chunks_of(corpus_dir, "pdf/ca_warn_report_2015-07_to_2016-03.pdf")
    rows = [(m.start(), m.end()) for m in re.finditer(r"(?m)^\|.*\|$", text)]
    assert len(rows) > 600  # one long table of layoffs plus the monthly summary
    table_chunks = [c for c in chunks if "|" in c.text]
    assert len(table_chunks) > 3  # split, but only between rows:
    for chunk in chunks:
        for start, end in rows:
            assert not start < chunk.char_start < end and not start < chunk.char_end < end
    # the table spans the report's pages and its pieces say so
    assert max(c.page_end for c in table_chunks) >= 15 and min(c.page_start for c in table_chunks) == 1


def test_two_column_sentence_stays_in_order_within_a_chunk(corpus_dir: Path) -> None:
    _, chunks = chunks_of(corpus_dir, "pdf/dpr_karpukhin2020_two_column_13p.pdf")
    sentence = ("Consider the question “Who is the bad guy in lord of the rings?”, which can be answered "
                "from the context “Sala Baker is best known for portraying the villain Sauron in the Lord "
                "of the Rings trilogy.”")
    assert any(sentence in " ".join(c.text.split()) for c in chunks)  # whole, in one chunk


def test_markdown_and_docx_section_paths_follow_their_headings(corpus_dir: Path) -> None:
    _, md = chunks_of(corpus_dir, "md/openapi_spec_3.0.3.md")
    info = [c for c in md if c.section_path and c.section_path[-1] == "Info Object"]
    assert info and len(info[0].section_path) >= 3  # nested under the spec's own headings
    _, docx = chunks_of(corpus_dir, "docx/docling_word_sample.docx")
    assert any("Let’s swim!" in c.section_path for c in docx)


def test_slide_titles_head_their_slides_chunks(corpus_dir: Path) -> None:
    _, chunks = chunks_of(corpus_dir, "pptx/docling_powerpoint_sample.pptx")
    assert all(c.page_start is not None for c in chunks)
    assert any(c.section_path for c in chunks)


@pytest.mark.parametrize("relative", DOCUMENTS)
def test_every_heading_is_searchable_and_no_chunk_only_repeats_its_headings(corpus_dir: Path, relative: str,
                                                                           embedder) -> None:
    """A heading with no body of its own is said by the section paths of the chunks under it
    (embedded and full-text indexed), not by a chunk of its own; nothing a heading says is lost."""
    from rag_pipeline.chunking.document_identity import document_identity
    from rag_pipeline.chunking.paragraph_headings import promote_paragraph_headings

    title, elements = _cleaned(str(corpus_dir / "docs" / relative))
    identity = document_identity(title, elements, relative)
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens, identity=identity)
    said = [" ".join(c.search_text.split()) for c in chunks]
    headings = [" ".join(e.text.split()) for e in promote_paragraph_headings(elements) if e.kind == "heading"]
    missing = [h for h in headings if h and not any(h in s for s in said)]
    assert not missing, missing[:5]
    carried = {" ".join(h.split()) for c in chunks for h in c.section_path}
    for chunk in chunks:
        body = " ".join(chunk.text.split())
        assert body not in carried, (chunk.ord, body)
