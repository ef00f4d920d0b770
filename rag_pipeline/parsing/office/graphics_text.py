"""The text of SmartArt diagrams and charts, read from their own parts of a DOCX or PPTX package.

python-docx and python-pptx (and so unstructured) read paragraphs, tables and text frames only:
a SmartArt diagram (a process, an org chart, a cycle of steps) and a chart (its title, series and
category labels, its values) live in parts of their own behind a graphic frame, and their text
was silently missing from the index, though a reader sees all of it on the page or slide.

- SmartArt: the diagram's data part holds its nodes and their parent-child connections; the
  nodes are read in the diagram's own order (depth first, siblings by their order) with their
  depth, so an org chart or a nested list keeps its shape as nested list items.
- Charts: the chart part caches what the chart shows; it becomes a table of one row per category
  and one column per series (the series names as the header), under the chart's title. Values
  formatted as percentages are written as such ("42%" for 0.42), others as cached.

Both readers take the part's bytes and return plain data; docx_graphics.py and pptx_graphics.py
put it where the partitioners read it. A part that cannot be parsed reads as nothing (the
graphic keeps showing nothing, as before) rather than failing the whole file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

A = "http://schemas.openxmlformats.org/drawingml/2006/main"
C = "http://schemas.openxmlformats.org/drawingml/2006/chart"
DGM = "http://schemas.openxmlformats.org/drawingml/2006/diagram"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
DIAGRAM_URI = DGM
CHART_URI = C
_NODE_TYPES = ("node", "asst")  # a point without a type is a node; "asst" is an org chart's assistant


@dataclass
class ChartText:
    """What a chart shows as text: its title and a table (first row: the header)."""

    title: str = ""
    rows: list[list[str]] = field(default_factory=list)


def _parsed(xml: bytes):  # noqa: ANN202 -- an lxml element, or None
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    try:
        return etree.fromstring(xml, parser)
    except etree.XMLSyntaxError:
        return None


def _text(element) -> str:  # noqa: ANN001 -- an lxml element
    """The text of DrawingML paragraphs under `element`, one space between paragraphs."""
    paragraphs = ["".join(t.text or "" for t in p.iter(f"{{{A}}}t")) for p in element.iter(f"{{{A}}}p")]
    return " ".join(" ".join(p.split()) for p in paragraphs if p.strip())


def smartart_nodes(data_xml: bytes) -> list[tuple[int, str]]:
    """(depth, text) of each node of a SmartArt data part with text, in the diagram's order."""
    root = _parsed(data_xml)
    if root is None:
        return []
    texts: dict[str, str] = {}
    roots: list[str] = []
    order: list[str] = []
    for point in root.iter(f"{{{DGM}}}pt"):
        kind, model_id = point.get("type", "node"), point.get("modelId", "")
        if kind == "doc":
            roots.append(model_id)
        elif kind in _NODE_TYPES:
            body = point.find(f"{{{DGM}}}t")
            texts[model_id] = _text(body) if body is not None else ""
            order.append(model_id)
    children: dict[str, list[tuple[int, str]]] = {}
    for link in root.iter(f"{{{DGM}}}cxn"):
        if link.get("type", "parOf") == "parOf":
            children.setdefault(link.get("srcId", ""), []).append((_whole(link.get("srcOrd")), link.get("destId", "")))
    out: list[tuple[int, str]] = []
    seen: set[str] = set()
    stack = [(-1, model_id) for model_id in reversed(roots)]
    while stack:  # depth first without recursion: a hostile diagram may be deep or cyclic
        depth, model_id = stack.pop()
        if model_id in seen:
            continue
        seen.add(model_id)
        if texts.get(model_id):
            out.append((max(depth, 0), texts[model_id]))
        stack.extend((depth + 1, child) for _, child in sorted(children.get(model_id, []), reverse=True))
    out += [(0, texts[m]) for m in order if m not in seen and texts[m]]  # nodes no connection reaches
    return out


def chart_text(chart_xml: bytes) -> ChartText:
    """The title and the table of values of a chart part (empty when it caches none)."""
    root = _parsed(chart_xml)
    if root is None:
        return ChartText()
    chart = root.find(f"{{{C}}}chart")
    if chart is None:
        return ChartText()
    title = chart.find(f"{{{C}}}title")
    series = [s for s in chart.iter(f"{{{C}}}ser")]
    columns = [(_series_name(s, n), _points(s, ("cat", "xVal")), _points(s, ("val", "yVal")))
               for n, s in enumerate(series, 1)]
    labels: dict[int, str] = {}
    for _, categories, _ in columns:
        for idx, label in categories.items():
            labels.setdefault(idx, label)
    indexes = sorted(set(labels).union(*(values for _, _, values in columns)))
    rows = [["", *(name for name, _, _ in columns)]] if indexes else []
    rows += [[labels.get(idx, str(idx + 1)), *(values.get(idx, "") for _, _, values in columns)] for idx in indexes]
    return ChartText(title=_title_text(title) if title is not None else "", rows=rows)


def _title_text(title) -> str:  # noqa: ANN001 -- an lxml element
    cached = [v.text or "" for v in title.iter(f"{{{C}}}v")]
    return _text(title) or " ".join(" ".join(cached).split())


def _series_name(series, number: int) -> str:  # noqa: ANN001 -- an lxml element
    name = series.find(f"{{{C}}}tx")
    if name is not None:
        text = " ".join(v.text or "" for v in name.iter(f"{{{C}}}v")) or _text(name)
        if text.strip():
            return " ".join(text.split())
    return f"Series {number}"


def _points(series, tags: tuple[str, ...]) -> dict[int, str]:  # noqa: ANN001 -- an lxml element
    """idx -> shown value of the first of `tags` the series has (a multi-level axis: its first
    level, the one next to the plot)."""
    for tag in tags:
        holder = series.find(f"{{{C}}}{tag}")
        if holder is None:
            continue
        level = holder.find(f".//{{{C}}}lvl")
        scope = level if level is not None else holder
        code = scope.find(f".//{{{C}}}formatCode")
        percent = code is not None and "%" in (code.text or "")
        points = {}
        for point in scope.iter(f"{{{C}}}pt"):
            value = point.find(f"{{{C}}}v")
            if value is not None and value.text is not None:
                points[_whole(point.get("idx"))] = _shown(value.text.strip(), percent)
        return points
    return {}


def _shown(value: str, percent: bool) -> str:
    if not percent:
        return value
    try:
        return f"{float(value) * 100:.10g}%"
    except ValueError:
        return value


def _whole(text: str | None) -> int:
    try:
        return int(text or 0)
    except ValueError:
        return 0
