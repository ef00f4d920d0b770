"""Structured XML read by its structure (parsing/xml_document.py): the Finnish Data Protection Act
in Finlex XML (refused as an unsupported type before), Akoma Ntoso, JATS and TEI shapes made here;
XML attacks (entity expansion, external entities, depth) and broken XML refused saying what to
do, nothing expanded; an XHTML page named .xml read as HTML."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_pipeline.parsing import ParseError, parse_document


def _read(xml: str, name: str = "doc.xml") -> list[tuple[str, str, int | None]]:
    return [(e.kind, e.text, e.level) for e in parse_document(xml.encode(), name).elements]


@pytest.mark.parametrize(("name", "chapter", "section", "body"), [
    ("fi_tietosuojalaki_1050-2018.fi.xml", "1 luku Yleiset säännökset", "3 § Sovellettava laki",
     "Tätä lakia ei sovelleta eduskunnan valtiopäivätoimintaan."),
    ("fi_tietosuojalaki_1050-2018.sv.xml", "1 kap. Allmänna bestämmelser", "3 § Tillämplig lag",
     "Denna lag tillämpas inte på riksdagsarbetet."),
])
def test_the_finnish_act_reads_by_chapter_and_section(corpus_dir: Path, name: str, chapter: str, section: str,
                                                      body: str) -> None:
    doc = parse_document((corpus_dir / "docs" / "xml" / name).read_bytes(), name)
    headings = {e.text: e.level for e in doc.elements if e.kind == "heading"}
    assert headings[chapter] == 2 and headings[section] == 3
    assert sum(1 for text in headings if "§" in text) >= 35
    texts = [e.text for e in doc.elements]
    assert body in texts
    assert not any("HE 9/2018" in t for t in texts)  # the identification block describes the act
    assert doc.title in ("Tietosuojalaki", "Dataskyddslag")


def test_akoma_ntoso_jats_and_tei_shapes() -> None:
    akn = ('<akomaNtoso xmlns="http://docs.oasis-open.org/legaldocml/ns/akn/3.0"><act><meta><identification>'
           'Work FRBR 2024/7</identification></meta><body><chapter><num>Chapter II</num><heading>Obligations</heading>'
           '<article><num>Article 5</num><heading>Principles</heading><paragraph><num>1.</num><content><p>Data shall '
           'be processed <i>lawfully</i>, fairly and transparently.</p></content></paragraph></article>'
           '<article><num>Article 6</num><paragraph><content><p>Processing is lawful only if one condition '
           'applies.</p></content></paragraph></article></chapter></body></act></akomaNtoso>')
    assert _read(akn) == [
        ("heading", "Chapter II Obligations", 1), ("heading", "Article 5 Principles", 2), ("heading", "1.", 3),
        ("paragraph", "Data shall be processed lawfully, fairly and transparently.", None),
        ("heading", "Article 6", 2), ("paragraph", "Processing is lawful only if one condition applies.", None)]
    jats = ('<article><front><article-meta><title-group><article-title>Dense retrieval</article-title></title-group>'
            '</article-meta></front><body><sec><label>2.1</label><title>Methods</title><p>We train two '
            '<bold>encoders</bold> on 58,880 questions.</p><table-wrap><table><thead><tr><th>Set</th><th>Top-20</th></tr>'
            '</thead><tbody><tr><td>NQ</td><td>78.4</td></tr></tbody></table></table-wrap></sec></body></article>')
    read = _read(jats)
    assert ("heading", "2.1 Methods", 1) in read or ("heading", "2.1 Methods", 2) in read
    assert ("paragraph", "We train two encoders on 58,880 questions.", None) in read
    assert ("paragraph", "NQ | 78.4", None) in read and ("paragraph", "Set | Top-20", None) in read
    tei = ('<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc>Catalogue record</fileDesc></teiHeader>'
           '<text><body><div><head>Letter I</head><p>Dear sister, I arrived safely.</p></div></body></text></TEI>')
    assert _read(tei) == [("heading", "Letter I", 1), ("paragraph", "Dear sister, I arrived safely.", None)]


def test_xml_attacks_and_broken_files_are_refused() -> None:
    laughs = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;'
              '&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">'
              ']><lolz><p>&lol3;</p></lolz>')
    with pytest.raises(ParseError, match="entities"):
        parse_document(laughs.encode(), "laughs.xml")
    external = '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]><d><p>&x;</p></d>'
    with pytest.raises(ParseError, match="entities"):
        parse_document(external.encode(), "external.xml")
    with pytest.raises(ParseError, match="not well-formed"):
        parse_document(b"<doc><p>unclosed</doc>", "broken.xml")
    deep = "<a>" * 100_000 + "text" + "</a>" * 100_000
    with pytest.raises(ParseError, match="not well-formed"):  # libxml2's depth guard
        parse_document(deep.encode(), "deep.xml")


def test_a_large_flat_file_and_an_xhtml_page() -> None:
    big = "<doc>" + "".join(f"<sec><title>Part {i}</title><p>Paragraph {i} of the register.</p></sec>" for i in range(50_000)) + "</doc>"
    elements = parse_document(big.encode(), "register.xml").elements
    assert len(elements) == 100_000 and elements[-1].text == "Paragraph 49999 of the register."
    xhtml = ('<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>Policy</title></head>'
             '<body><h1>Travel</h1><p>Hotels are capped at EUR 140 a night.</p></body></html>')
    assert ("paragraph", "Hotels are capped at EUR 140 a night.", None) in _read(xhtml, "policy.xml")
