"""Structured XML read by its structure (parsing/xml_document.py): the Finnish Data Protection Act
in Finlex XML (refused as an unsupported type before), Akoma Ntoso, JATS and TEI shapes made here;
HTML character names and a file's own plain entities read once; XML attacks (entity expansion,
external entities, depth) and broken XML refused saying what to do, nothing expanded; an XHTML page named .xml read as HTML."""

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


def test_html_character_names_and_the_files_own_entities_are_read_once() -> None:
    """A JATS article exported with its DTD's &mdash; (a DTD never loaded), a file that uses
    HTML names with no DTD at all, and an entity the file declares itself: each reads as text,
    tails and inline markup in place; a CDATA section and a comment keep their "&mdash;"."""
    jats = ('<?xml version="1.0"?><!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Archiving v1.2//EN" '
            '"JATS-archivearticle1.dtd"><article><body><sec><title>R&eacute;sultats</title>'
            '<p>Dose 5&ndash;10 mg <italic>daily</italic>&mdash;as agreed &amp; signed.</p></sec></body></article>')
    assert _read(jats) == [("heading", "Résultats", 1), ("paragraph", "Dose 5–10 mg daily—as agreed & signed.", None)]
    bare = '<doc><p>Caf&eacute; &hellip; <![CDATA[&mdash; kept]]> na&iuml;ve<!-- &bogus; --></p></doc>'
    assert _read(bare) == [("paragraph", "Café … &mdash; kept naïve", None)]
    own = '<!DOCTYPE d [<!ENTITY co "Acme Corp"><!ENTITY pct "50&#37;">]><d><p>&co; owns &pct; of &co; Ltd.</p></d>'
    assert _read(own) == [("paragraph", "Acme Corp owns 50% of Acme Corp Ltd.", None)]


def test_entities_that_cannot_be_read_once_are_refused_by_name() -> None:
    """An entity declared only in a DTD that is not loaded, or declared nowhere, is named in the
    error; an entity made of other entities, or one amplified past the file's size, is an attack."""
    with pytest.raises(ParseError, match="&medication;"):
        parse_document(b'<!DOCTYPE a SYSTEM "pharma.dtd"><a><p>Take &medication; twice.</p></a>', "x.xml")
    with pytest.raises(ParseError, match="declared nowhere"):
        parse_document(b"<a><p>Take &medication; twice.</p></a>", "x.xml")
    nested = '<!DOCTYPE a [<!ENTITY x "lol"><!ENTITY y "&x;&x;">]><a><p>&y;</p></a>'
    with pytest.raises(ParseError, match="&y;"):
        parse_document(nested.encode(), "nested.xml")
    wide = '<!DOCTYPE a [<!ENTITY w "' + "A" * 10_000 + '">]><a><p>' + "&w;" * 5_000 + "</p></a>"
    with pytest.raises(ParseError, match="entit"):  # 50 million characters from 15 kB
        parse_document(wide.encode(), "wide.xml")


def test_a_paragraph_of_fifty_thousand_character_names_is_read_whole() -> None:
    """Each entity folded into the text in one pass over its parent (one at a time was quadratic)."""
    xml = '<!DOCTYPE a SYSTEM "x.dtd"><a><p>' + "x&mdash;" * 50_000 + "<b>end</b>&hellip;</p></a>"
    (paragraph,) = parse_document(xml.encode(), "long.xml").elements
    assert paragraph.text == "x—" * 50_000 + "end…"


def test_a_large_flat_file_and_an_xhtml_page() -> None:
    big = "<doc>" + "".join(f"<sec><title>Part {i}</title><p>Paragraph {i} of the register.</p></sec>" for i in range(50_000)) + "</doc>"
    elements = parse_document(big.encode(), "register.xml").elements
    assert len(elements) == 100_000 and elements[-1].text == "Paragraph 49999 of the register."
    xhtml = ('<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>Policy</title></head>'
             '<body><h1>Travel</h1><p>Hotels are capped at EUR 140 a night.</p></body></html>')
    assert ("paragraph", "Hotels are capped at EUR 140 a night.", None) in _read(xhtml, "policy.xml")
