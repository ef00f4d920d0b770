"""SmartArt diagrams and charts in DOCX and PPTX files are read (office/graphics_text.py): their
text was silently missing from the index, though a reader sees it on the page or slide. Charts
are made by python-pptx (a real chart part); SmartArt data parts are written as PowerPoint and
Word write them (points, parent-of connections with their order, presentation points)."""

from __future__ import annotations

import io
import time
import zipfile
from typing import Any

import pptx
import pytest
from docx import Document
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE
from pptx.opc.constants import RELATIONSHIP_TYPE as RT
from pptx.opc.package import Part
from pptx.opc.packuri import PackURI
from pptx.oxml import parse_xml
from pptx.util import Inches

from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.office.graphics_text import chart_text, smartart_nodes

LIMITS = ParseLimits(ocr=False)
DGM = "http://schemas.openxmlformats.org/drawingml/2006/diagram"
REL = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'


def _point(model_id: str, text: str | None = None, kind: str | None = None) -> str:
    body = f"<dgm:t><a:bodyPr/><a:p><a:r><a:t>{text}</a:t></a:r></a:p></dgm:t>" if text else ""
    return f'<dgm:pt modelId="{model_id}"{f" type={kind!r}" if kind else ""}><dgm:prSet/><dgm:spPr/>{body}</dgm:pt>'


def smartart(points: list[str], links: list[tuple[str, str, int]], extra: str = "") -> bytes:
    """A SmartArt data part: `links` are (parent, child, order) parent-of connections."""
    connections = "".join(f'<dgm:cxn modelId="c{n}" srcId="{s}" destId="{d}" srcOrd="{o}" destOrd="0"/>'
                          for n, (s, d, o) in enumerate(links))
    return (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>{extra}<dgm:dataModel xmlns:dgm="{DGM}" '
            f'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><dgm:ptLst>{"".join(points)}</dgm:ptLst>'
            f"<dgm:cxnLst>{connections}</dgm:cxnLst></dgm:dataModel>").encode()


PROCESS = smartart(
    [_point("0", kind="doc"), _point("2", "Review the claim"), _point("1", "Receive the claim"),
     _point("3", "Check the policy number"), _point("9", kind="parTrans"), _point("8", kind="sibTrans"),
     _point("7", "shape text of a presentation point", kind="pres")],
    [("0", "1", 0), ("0", "2", 1), ("2", "3", 0)])


def deck_with(chart: bool = True, diagram: bytes | None = PROCESS, hidden_chart: bool = False) -> bytes:
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Regional results"
    if chart:
        data = CategoryChartData(number_format="0%")
        data.categories = ["North", "South", "East"]
        data.add_series("Margin", (0.42, 0.31, 0.5))
        frame = slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(4), Inches(6), Inches(3), data)
        frame.chart.has_title = True
        frame.chart.chart_title.text_frame.text = "Margin by region"
        if hidden_chart:
            frame._element.nvGraphicFramePr.cNvPr.set("hidden", "1")
    if diagram is not None:
        part = Part(PackURI("/ppt/diagrams/data1.xml"),
                    "application/vnd.openxmlformats-officedocument.drawingml.diagramData+xml", deck.part.package, diagram)
        rid = slide.part.relate_to(part, RT.DIAGRAM_DATA)
        slide.shapes._spTree.append(parse_xml(
            f'<p:graphicFrame xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" '
            f'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" {REL}><p:nvGraphicFramePr>'
            f'<p:cNvPr id="90" name="Diagram 1"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm>'
            f'<a:off x="914400" y="1600000"/><a:ext cx="5000000" cy="1000000"/></p:xfrm><a:graphic>'
            f'<a:graphicData uri="{DGM}"><dgm:relIds xmlns:dgm="{DGM}" r:dm="{rid}" r:lo="{rid}" r:qs="{rid}" '
            f'r:cs="{rid}"/></a:graphicData></a:graphic></p:graphicFrame>'))
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def chart_part() -> bytes:
    with zipfile.ZipFile(io.BytesIO(deck_with(diagram=None))) as archive:
        return archive.read("ppt/charts/chart1.xml")


_DRAWING = ('<w:p><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/'
            'wordprocessingDrawing"><wp:extent cx="100" cy="100"/><wp:docPr id="{id}" name="g"/><a:graphic '
            'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:graphicData uri="{uri}">{inner}'
            "</a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>")


def document_with(diagram: bytes | None, chart: bytes | None, dangling: bool = False) -> bytes:
    """A Word document with a SmartArt and a chart drawing between two paragraphs."""
    document = Document()
    document.add_heading("Claims process", 1)
    document.add_paragraph("The steps are shown below.")
    raw = io.BytesIO()
    document.save(raw)
    with zipfile.ZipFile(raw) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    drawings = _DRAWING.format(id=10, uri=DGM, inner=f'<dgm:relIds xmlns:dgm="{DGM}" {REL} r:dm="rIdD1" r:lo="rIdD1" '
                               'r:qs="rIdD1" r:cs="rIdD1"/>')
    drawings += _DRAWING.format(id=11, uri="http://schemas.openxmlformats.org/drawingml/2006/chart",
                                inner=f'<c:chart xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" {REL} '
                                      'r:id="rIdC1"/>')
    body = parts["word/document.xml"].decode()
    parts["word/document.xml"] = body.replace(
        "<w:sectPr", drawings + "<w:p><w:r><w:t>After the graphics.</w:t></w:r></w:p><w:sectPr", 1).encode()
    if not dangling:
        rels = ('<Relationship Id="rIdD1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
                'diagramData" Target="diagrams/data1.xml"/><Relationship Id="rIdC1" Type="http://schemas.'
                'openxmlformats.org/officeDocument/2006/relationships/chart" Target="charts/chart1.xml"/>')
        name = "word/_rels/document.xml.rels"
        parts[name] = parts[name].decode().replace("</Relationships>", rels + "</Relationships>").encode()
    if diagram is not None:
        parts["word/diagrams/data1.xml"] = diagram
    if chart is not None:
        parts["word/charts/chart1.xml"] = chart
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return out.getvalue()


def _shape(elements: list[Any]) -> list[tuple[str, str]]:
    return [(e.kind, e.text) for e in elements]


def test_a_slide_chart_is_read_as_its_title_and_a_table_of_its_values() -> None:
    elements = parse_document(deck_with(diagram=None), "results.pptx", LIMITS).elements
    assert _shape(elements) == [
        ("heading", "Regional results"), ("paragraph", "Margin by region"),
        ("table", "|  | Margin |\n|---|---|\n| North | 42% |\n| South | 31% |\n| East | 50% |")]
    assert {e.page for e in elements} == {1}


def test_slide_smartart_is_read_as_list_items_in_the_diagrams_order_at_their_depth() -> None:
    elements = parse_document(deck_with(chart=False), "process.pptx", LIMITS).elements
    assert _shape(elements) == [("heading", "Regional results"), ("list_item", "Receive the claim"),
                                ("list_item", "Review the claim"), ("list_item", "Check the policy number")]
    with zipfile.ZipFile(io.BytesIO(deck_with(chart=False))) as archive:
        assert b"presentation point" in archive.read("ppt/diagrams/data1.xml")  # there, and rightly not read


def test_graphics_read_in_slide_order_and_a_hidden_chart_stays_out() -> None:
    texts = [e.text for e in parse_document(deck_with(), "both.pptx", LIMITS).elements]
    assert texts.index("Check the policy number") < texts.index("Margin by region")  # diagram above the chart
    hidden = [e.text for e in parse_document(deck_with(hidden_chart=True), "h.pptx", LIMITS).elements]
    assert "Margin by region" not in hidden and not any("42%" in t for t in hidden)
    assert "Receive the claim" in hidden


def test_word_smartart_and_charts_follow_the_paragraph_that_holds_them() -> None:
    elements = parse_document(document_with(PROCESS, chart_part()), "claims.docx", LIMITS).elements
    assert _shape(elements) == [
        ("heading", "Claims process"), ("paragraph", "The steps are shown below."),
        ("list_item", "Receive the claim"), ("list_item", "Review the claim"), ("list_item", "Check the policy number"),
        ("paragraph", "Margin by region"),
        ("table", "|  | Margin |\n|---|---|\n| North | 42% |\n| South | 31% |\n| East | 50% |"),
        ("paragraph", "After the graphics.")]


@pytest.mark.parametrize("diagram, chart, dangling", [
    (b"<dgm:dataModel", b"not xml at all", False),  # damaged parts
    (None, None, False),  # relationships to parts that are not in the package
    (PROCESS, None, True),  # drawings whose relationships are missing
])
def test_damaged_or_missing_graphic_parts_leave_the_rest_of_the_document(diagram: bytes | None, chart: bytes | None,
                                                                         dangling: bool) -> None:
    elements = parse_document(document_with(diagram, chart, dangling), "damaged.docx", LIMITS).elements
    assert _shape(elements) == [("heading", "Claims process"), ("paragraph", "The steps are shown below."),
                                ("paragraph", "After the graphics.")]


def test_a_cyclic_or_very_deep_diagram_reads_each_node_once_without_recursion() -> None:
    cyclic = smartart([_point("0", kind="doc"), _point("1", "A"), _point("2", "B")],
                      [("0", "1", 0), ("1", "2", 0), ("2", "1", 0)])
    assert smartart_nodes(cyclic) == [(0, "A"), (1, "B")]
    depth = 20_000
    chain = smartart([_point("0", kind="doc"), *(_point(str(n), f"step {n}") for n in range(1, depth + 1))],
                     [(str(n), str(n + 1), 0) for n in range(depth)])
    nodes = smartart_nodes(chain)
    assert len(nodes) == depth and nodes[-1] == (depth - 1, f"step {depth}")


def test_nodes_no_connection_reaches_are_still_read() -> None:
    loose = smartart([_point("1", "First"), _point("2", "Second")], [])
    assert smartart_nodes(loose) == [(0, "First"), (0, "Second")]


def test_an_entity_bomb_in_a_chart_part_is_not_expanded() -> None:
    bomb = ('<!DOCTYPE c [<!ENTITY a "aaaaaaaaaa">' + "".join(
        f'<!ENTITY {chr(98 + n)} "{("&" + chr(97 + n) + ";") * 10}">' for n in range(8)) + "]>")
    part = chart_part().decode().replace("Margin by region", "&i;")
    part = part.replace("?>", "?>" + bomb, 1) if part.startswith("<?xml") else bomb + part
    start = time.process_time()
    text = chart_text(part.encode())
    assert time.process_time() - start < 60  # 10**9 characters if it were expanded
    assert len(text.title) < 1000


def test_a_chart_of_many_categories_keeps_every_value() -> None:
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    data = CategoryChartData()
    data.categories = [f"day {n}" for n in range(5_000)]
    data.add_series("Requests", [float(n) for n in range(5_000)])
    slide.shapes.add_chart(XL_CHART_TYPE.LINE, Inches(1), Inches(1), Inches(6), Inches(4), data)
    out = io.BytesIO()
    deck.save(out)
    [table] = [e for e in parse_document(out.getvalue(), "daily.pptx", LIMITS).elements if e.kind == "table"]
    assert table.text.count("\n") == 5_001 and "| day 4999 | 4999.0 |" in table.text


def _without_media(data: bytes) -> bytes:
    """The package with every picture part deleted (a broken export), relationships left pointing at them."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            if "/media/" not in info.filename:
                target.writestr(info, source.read(info.filename))
    return out.getvalue()


@pytest.mark.parametrize("name", ["docx/docling_word_sample.docx", "docx/doj_ust_chapter13_trustee_handbook_2012.docx",
                                  "pptx/nasa_gsfc_science_exploration_1slide.pptx"])
def test_a_real_file_missing_its_pictures_reads_all_its_text(corpus_dir: Any, name: str) -> None:
    """python-docx and python-pptx refused the whole file ("There is no item named
    'word/media/image1.png' in the archive"); Word and PowerPoint open it and show the text."""
    intact = (corpus_dir / "docs" / name).read_bytes()
    broken = _without_media(intact)
    assert len(broken) < len(intact)
    expected = parse_document(intact, name, LIMITS)
    parsed = parse_document(broken, name, LIMITS)
    assert _shape(parsed.elements) == _shape(expected.elements)
    if name.endswith(".docx"):
        assert any("missing from the package" in warning for warning in parsed.warnings)


def test_relationships_of_real_files_are_not_taken_for_missing(corpus_dir: Any) -> None:
    """Every relationship of the corpus' Office files resolves (one deck points at "../customXml/item1.xml"
    from the package root, which readers resolve at the root): none is dropped, no file is rewritten."""
    from rag_pipeline.parsing.office.archive_parts import dangling_relationships_dropped

    files = sorted((corpus_dir / "docs").glob("*/*.docx")) + sorted((corpus_dir / "docs").glob("*/*.pptx"))
    assert len(files) >= 6
    for path in files:
        with zipfile.ZipFile(path) as archive:
            assert dangling_relationships_dropped(archive) == ({}, 0), path


def test_a_relationship_the_reader_cannot_follow_is_dropped_even_if_a_decoded_name_exists(corpus_dir: Any) -> None:
    """A picture relationship written percent-encoded ("image%201.png") beside a part named with a
    space: python-docx does not decode targets, so it cannot load that part and refused the file.
    The relationship is judged as the reader resolves it, dropped, and the text is all read."""
    intact = (corpus_dir / "docs" / "docx" / "docling_word_sample.docx").read_bytes()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(intact)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename == "word/_rels/document.xml.rels":
                data = data.replace(b'Target="media/image1.png"', b'Target="media/image%201.png"')
                assert b"image%201.png" in data
            target.writestr(info.filename.replace("image1.png", "image 1.png"), data)
    parsed = parse_document(out.getvalue(), "encoded.docx", LIMITS)
    assert _shape(parsed.elements) == _shape(parse_document(intact, "intact.docx", LIMITS).elements)
    assert any(warning.startswith("1 embedded chunk(s) in RTF or part(s) missing") for warning in parsed.warnings)
