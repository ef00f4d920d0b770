"""Headings where the document has no outline: bold, numbered, keyword ("Item 7.", "PART II",
"§ 3") and ALL-CAPS short paragraphs become sections, so chunks of SEC filings and plain
government documents carry a section path -- and lists, sentences, table rows, running headers
and huge bold paragraphs never become headings."""

from __future__ import annotations

from pathlib import Path

from test_real_documents_chunks import chunks_of

from rag_pipeline.chunking.chunks import chunk_elements, cleaned_text
from rag_pipeline.chunking.paragraph_headings import heading_style, promote_paragraph_headings
from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.types import Element

TEN_K = "html/sec_10k_galaxy_gaming_2021.html"
BODY = "The committee reviewed the figures for the year and found them complete and correct."


def _share_with_path(chunks) -> float:
    return sum(1 for c in chunks if c.section_path) / len(chunks)


def test_sec_10k_without_an_outline_gets_sections_on_nearly_every_chunk(corpus_dir: Path) -> None:
    parsed = parse_document((corpus_dir / "docs" / TEN_K).read_bytes(), Path(TEN_K).name)
    # before: the filing's headings are styled paragraphs; the parser finds no heading at all,
    # so without this pass no chunk had a section path (measured: 0 of 196 chunks)
    assert not [e for e in parsed.elements if e.kind == "heading"]
    _, chunks = chunks_of(corpus_dir, TEN_K)
    share = _share_with_path(chunks)
    print(f"10-K chunks with a section path: {share:.3f} of {len(chunks)} (before: 0.000)")
    assert share >= 0.9
    paths = [" > ".join(c.section_path) for c in chunks]
    mdna = "PART II > ITEM 7. MANAGEMENT’S DISCUSSION AND ANALYSIS OF FINANCIAL CONDITION AND RESULTS OF OPERATIONS"
    assert any(p.startswith(mdna) for p in paths)
    assert any(p.startswith("PART I > ITEM 1A. RISK FACTORS") for p in paths)
    assert any(p.endswith("NOTE 10. LONG-TERM DEBT AND LIABILITIES") for p in paths)
    assert any(p.endswith("BUSINESS > Products and Services") for p in paths)  # bold only, by CSS
    # the table of contents is a table: its "Item 7." cells never become headings
    assert not any("| Item" in p for p in paths)


def test_sec_10k_section_text_is_found_under_its_item(corpus_dir: Path) -> None:
    _, chunks = chunks_of(corpus_dir, TEN_K)
    risk = next(c for c in chunks if "ITEM 1A. RISK FACTORS" in c.section_path)
    assert "smaller reporting company is not required" in risk.text
    assert risk.search_text.index("ITEM 1A. RISK FACTORS") < risk.search_text.index(risk.text)


def test_government_pdfs_keep_their_sections(corpus_dir: Path) -> None:
    """The IRS manual and the NIST framework have outlines/font headings: the pass leaves them
    alone (it never adds guesses to real structure) and nearly every chunk has a path."""
    for relative, heading in (("pdf/irs_irm_2.3.59_idrs_400p.pdf", "2.3.59.1 Program Scope and Objectives"),
                              ("pdf/nist_csf_v1.1_2018-04-16.pdf", "2.1 Framework Core")):
        _, chunks = chunks_of(corpus_dir, relative)
        share = _share_with_path(chunks)
        print(f"{relative}: {share:.3f} of {len(chunks)} chunks with a section path")
        assert share >= 0.9
        assert any(heading in c.section_path for c in chunks), heading


def test_paragraph_headings_nest_by_kind_and_keep_offsets(embedder) -> None:
    elements = [
        Element("paragraph", "PART I"),
        Element("paragraph", "Item 1. Business"),
        Element("paragraph", BODY),
        Element("paragraph", "COMPETITION"),
        Element("paragraph", BODY),
        Element("paragraph", "Item 2. Properties"),
        Element("paragraph", BODY),
        Element("paragraph", "§ 3"),
        Element("paragraph", "Trestný čin je protiprávní čin, který trestní zákon označuje za trestný."),
        Element("paragraph", "2.1 Scope of the rules"),
        Element("paragraph", BODY),
    ]
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens, target_tokens=64)
    text, _ = cleaned_text(elements)
    paths = [c.section_path for c in chunks]
    assert ["PART I", "Item 1. Business"] in paths
    # the short ALL-CAPS subsection nests under the item (merged into its chunk since issue 28)
    competition = next(c for c in chunks if "COMPETITION" in c.section_path or "COMPETITION\n\n" in c.text)
    assert competition.section_path[:2] == ["PART I", "Item 1. Business"]
    assert ["PART I", "Item 2. Properties"] in paths  # the item pops the ALL-CAPS heading
    assert any(p and p[-1] == "§ 3" for p in paths)
    assert any(p and p[-1] == "2.1 Scope of the rules" for p in paths)
    for chunk in chunks:
        assert text[chunk.char_start : chunk.char_end] == chunk.text


def test_five_thousand_all_caps_one_word_lines_are_not_headings(embedder) -> None:
    elements = [Element("paragraph", f"WORD{'ABCDEFGHIJ'[i % 10]}") for i in range(5000)]
    assert all(e.kind == "paragraph" for e in promote_paragraph_headings(elements))
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens)
    assert chunks and not any(c.section_path for c in chunks)


def test_a_numbered_list_is_not_a_set_of_headings() -> None:
    elements = [Element("paragraph", BODY)] + [
        Element("paragraph", text) for text in ("1. Apples", "2. Pears", "3. Plums", "4. Cherries")
    ] + [Element("paragraph", BODY)]
    assert [e.kind for e in promote_paragraph_headings(elements)] == ["paragraph"] * 6


def test_huge_bold_paragraphs_sentences_and_table_rows_are_not_headings() -> None:
    huge = Element("paragraph", " ".join(["Bold"] * 3000), bold=True)
    candidates = [
        huge,
        Element("paragraph", "Everything in this paragraph is bold but it is a sentence.", bold=True),
        Element("paragraph", "1. The applicant must send the form within thirty days."),
        Element("paragraph", "Section 2.1 applies to all staff travelling abroad"),
        Element("paragraph", "where a skin is a separately branded URL"),
        Element("paragraph", "24 19-61 End of Screen Message"),  # a table row set as text
        Element("paragraph", "M = IRC 965"),
        Element("list_item", "IMPORTANT NOTICE"),
        Element("table", "| ITEM 7. | MD&A |\n|---|---|\n| a | b |"),
    ]
    elements = [x for c in candidates for x in (c, Element("paragraph", BODY))]
    assert not [e for e in promote_paragraph_headings(elements) if e.kind == "heading"]


def test_running_headers_repeated_on_pages_are_not_headings() -> None:
    elements = []
    for _ in range(4):
        elements += [Element("paragraph", "ANNUAL REPORT 2021"), Element("paragraph", BODY)]
    assert not [e for e in promote_paragraph_headings(elements) if e.kind == "heading"]


def test_documents_with_an_outline_are_left_as_parsed() -> None:
    elements = [Element("heading", "Travel Policy", level=1), Element("paragraph", BODY),
                Element("heading", "Approval", level=2), Element("paragraph", BODY),
                Element("heading", "Rates", level=2), Element("paragraph", "SUMMARY"), Element("paragraph", BODY)]
    assert promote_paragraph_headings(elements) == elements


def test_paragraph_headings_nest_under_a_lone_title_heading() -> None:
    elements = [Element("heading", "Annual Report", level=1), Element("paragraph", "OVERVIEW"),
                Element("paragraph", BODY)]
    out = promote_paragraph_headings(elements)
    assert (out[1].kind, out[1].level) == ("heading", 2)


def test_heading_style_names_the_form_of_a_heading() -> None:
    assert heading_style("Item 7. Management's Discussion and Analysis of Financial Condition") == "item"
    assert heading_style("ITEM 1A. RISK FACTORS") == "item"
    assert heading_style("PART II") == "part"
    assert heading_style("Article 5") == "article"
    assert heading_style("§ 3") == "paragraph_sign"
    assert heading_style("Section 2.1 Definitions") == "section"
    assert heading_style("A. Background") == "lettered"
    assert heading_style("1.2 Scope") == "numbered2"
    assert heading_style("Products and Services", bold=True) == "bold"
    assert heading_style("Products and Services") is None  # plain title case is not enough
    assert heading_style("") is None and heading_style("   ") is None
