"""SmartArt and charts on slides, made shapes python-pptx reads (graphics_text.py says why).

A SmartArt frame becomes a text box in its place holding one bulleted paragraph per node at the
node's depth (so unstructured reads list items); a chart frame becomes a table frame in its place
(a row per category, a column per series), its title a text box just above it. Positions are
kept, so the reading order of the slide is the one the graphics had."""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape, quoteattr

from rag_pipeline.parsing.office.graphics_text import CHART_URI, DGM, DIAGRAM_URI, A, R, chart_text, smartart_nodes

P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_NS = f'xmlns:p="{P}" xmlns:a="{A}"'
_MAX_LEVEL = 8  # a:pPr lvl is 0..8


def graphics_as_shapes(presentation: Any) -> int:
    """Each SmartArt and chart frame of every slide replaced, in place; the number replaced."""
    replaced = 0
    for slide in presentation.slides:
        tree = slide.shapes._spTree
        next_id = max((int(e.get("id")) for e in tree.iter(f"{{{P}}}cNvPr") if (e.get("id") or "").isdigit()),
                      default=0) + 1
        for frame in list(tree.iter(f"{{{P}}}graphicFrame")):
            data = frame.find(f".//{{{A}}}graphicData")
            uri = data.get("uri") if data is not None else None
            if uri == DIAGRAM_URI:
                done = _smartart_replaced(slide, frame, data, next_id)
            elif uri == CHART_URI:
                done = _chart_replaced(slide, frame, data, next_id)
            else:
                continue
            next_id += 2 * done
            replaced += done
    return replaced


def _blob(slide: Any, holder: Any, attribute: str) -> bytes | None:
    """The bytes of the part `holder`'s relationship attribute points to (None when missing)."""
    rid = holder.get(f"{{{R}}}{attribute}") if holder is not None else None
    try:
        return slide.part.related_part(rid).blob if rid else None
    except (KeyError, AttributeError):
        return None


def _smartart_replaced(slide: Any, frame: Any, data: Any, shape_id: int) -> bool:
    blob = _blob(slide, data.find(f"{{{DGM}}}relIds"), "dm")
    nodes = smartart_nodes(blob) if blob else []
    if not nodes:
        return False
    paragraphs = "".join(f'<a:p><a:pPr lvl="{min(depth, _MAX_LEVEL)}"><a:buChar char="&#8226;"/></a:pPr>'
                         f"<a:r><a:t>{escape(text)}</a:t></a:r></a:p>" for depth, text in nodes)
    _replace(frame, _text_box(shape_id, "SmartArt", _position(frame), paragraphs))
    return True


def _chart_replaced(slide: Any, frame: Any, data: Any, shape_id: int) -> bool:
    blob = _blob(slide, data.find(f"{{{CHART_URI}}}chart"), "id")
    chart = chart_text(blob) if blob else None
    if chart is None or not (chart.rows or chart.title):
        return False
    x, y, cx, cy = _position(frame)
    parent, at = frame.getparent(), frame.getparent().index(frame)
    if chart.rows:
        parent.insert(at + 1, _table_frame(shape_id + 1, (x, y, cx, cy), chart.rows))
    if chart.title:  # just above the table, so it is read first
        title = f"<a:p><a:r><a:t>{escape(chart.title)}</a:t></a:r></a:p>"
        parent.insert(at + 1, _text_box(shape_id, "Chart title", (x, max(0, y - 1), cx, 1), title))
    parent.remove(frame)
    return True


def _position(frame: Any) -> tuple[int, int, int, int]:
    off, ext = frame.find(f"{{{P}}}xfrm/{{{A}}}off"), frame.find(f"{{{P}}}xfrm/{{{A}}}ext")
    return _number(off, "x"), _number(off, "y"), _number(ext, "cx"), _number(ext, "cy")


def _number(element: Any, name: str) -> int:
    try:
        return int(element.get(name)) if element is not None else 0
    except (TypeError, ValueError):
        return 0


def _text_box(shape_id: int, name: str, box: tuple[int, int, int, int], paragraphs: str) -> Any:
    from pptx.oxml import parse_xml

    x, y, cx, cy = box
    return parse_xml(
        f'<p:sp {_NS}><p:nvSpPr><p:cNvPr id="{shape_id}" name={quoteattr(name)}/><p:cNvSpPr txBox="1"/><p:nvPr/>'
        f'</p:nvSpPr><p:spPr><a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{cx}" cy="{cy}"/></a:xfrm></p:spPr>'
        f"<p:txBody><a:bodyPr/><a:lstStyle/>{paragraphs}</p:txBody></p:sp>")


def _table_frame(shape_id: int, box: tuple[int, int, int, int], rows: list[list[str]]) -> Any:
    from pptx.oxml import parse_xml

    x, y, cx, cy = box
    width = len(rows[0])
    cells = "".join(
        "<a:tr h=\"0\">" + "".join(f"<a:tc><a:txBody><a:bodyPr/><a:lstStyle/><a:p><a:r><a:t>{escape(cell)}</a:t></a:r>"
                                  "</a:p></a:txBody><a:tcPr/></a:tc>" for cell in row) + "</a:tr>" for row in rows)
    grid = f'<a:gridCol w="{max(1, cx // max(1, width))}"/>' * width
    return parse_xml(
        f'<p:graphicFrame {_NS}><p:nvGraphicFramePr><p:cNvPr id="{shape_id}" name="Chart data"/><p:cNvGraphicFramePr/>'
        f'<p:nvPr/></p:nvGraphicFramePr><p:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{cx}" cy="{cy}"/></p:xfrm>'
        f'<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table"><a:tbl><a:tblPr/>'
        f"<a:tblGrid>{grid}</a:tblGrid>{cells}</a:tbl></a:graphicData></a:graphic></p:graphicFrame>")


def _replace(old: Any, new: Any) -> None:
    old.getparent().replace(old, new)
