"""SmartArt and charts in Word documents, written out where python-docx reads them
(graphics_text.py says why).

The drawing stays where it is (it has no text python-docx reads); after the paragraph that holds
it come a SmartArt's nodes, one bulleted paragraph each (unstructured reads list items), or a
chart's title as a paragraph and its values as a table (a row per category, a column per
series). A drawing's fallback copy for older readers (`mc:Fallback`) is skipped, so nothing is
read twice."""

from __future__ import annotations

import re
import zipfile
from typing import Any

from rag_pipeline.parsing.office.docx_alt_chunks import W, paragraph_element, part_targets
from rag_pipeline.parsing.office.graphics_text import CHART_URI, DGM, DIAGRAM_URI, A, R, chart_text, smartart_nodes

GRAPHICS = re.compile(rb'uri="http://schemas.openxmlformats.org/drawingml/2006/(?:diagram|chart)"')
_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"


def graphics_written_out(root: Any, archive: zipfile.ZipFile, part: str) -> bool:
    """Each SmartArt's and chart's text written after its paragraph in the parsed `part`;
    whether any was."""
    targets = part_targets(archive, part)
    written = False
    for data in list(root.iter(f"{{{A}}}graphicData")):
        if any(ancestor.tag == _FALLBACK for ancestor in data.iterancestors()):
            continue
        host = next((a for a in data.iterancestors(f"{{{W}}}p")), None)
        if host is None:
            continue
        uri = data.get("uri")
        if uri == DIAGRAM_URI:
            blocks = _smartart_blocks(root, archive, targets, data)
        elif uri == CHART_URI:
            blocks = _chart_blocks(root, archive, targets, data)
        else:
            continue
        at = host.getparent().index(host)
        for offset, block in enumerate(blocks, 1):
            host.getparent().insert(at + offset, block)
        written = written or bool(blocks)
    return written


def _blob(archive: zipfile.ZipFile, targets: dict[str, str], holder: Any, attribute: str) -> bytes | None:
    name = targets.get(holder.get(f"{{{R}}}{attribute}") or "") if holder is not None else None
    try:
        return archive.read(name) if name else None
    except KeyError:
        return None


def _smartart_blocks(root: Any, archive: zipfile.ZipFile, targets: dict[str, str], data: Any) -> list[Any]:
    blob = _blob(archive, targets, data.find(f"{{{DGM}}}relIds"), "dm")
    return [paragraph_element(root, None, f"\u2022 {text}") for _, text in (smartart_nodes(blob) if blob else [])]


def _chart_blocks(root: Any, archive: zipfile.ZipFile, targets: dict[str, str], data: Any) -> list[Any]:
    blob = _blob(archive, targets, data.find(f"{{{CHART_URI}}}chart"), "id")
    chart = chart_text(blob) if blob else None
    if chart is None:
        return []
    blocks = [paragraph_element(root, None, chart.title)] if chart.title else []
    if chart.rows:
        blocks.append(_table(root, chart.rows))
    return blocks


def _table(like: Any, rows: list[list[str]]) -> Any:
    table = like.makeelement(f"{{{W}}}tbl", {})
    properties = table.makeelement(f"{{{W}}}tblPr", {})
    properties.append(properties.makeelement(f"{{{W}}}tblW", {f"{{{W}}}w": "0", f"{{{W}}}type": "auto"}))
    table.append(properties)
    grid = table.makeelement(f"{{{W}}}tblGrid", {})
    for _ in rows[0]:
        grid.append(grid.makeelement(f"{{{W}}}gridCol", {f"{{{W}}}w": "1000"}))
    table.append(grid)
    for row in rows:
        line = table.makeelement(f"{{{W}}}tr", {})
        for cell in row:
            box = line.makeelement(f"{{{W}}}tc", {})
            box.append(paragraph_element(like, None, cell))
            line.append(box)
        table.append(line)
    return table
