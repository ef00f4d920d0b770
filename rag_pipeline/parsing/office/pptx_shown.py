"""PPTX text that PowerPoint does not show, taken out of the slides before unstructured reads them.

python-pptx (and so unstructured) reads every shape of a slide's tree, seen or not. Decks carry
text nobody looking at the slide sees: shapes hidden in the selection pane (`cNvPr hidden`),
shapes parked beside the slide (drafts, old wording, an instruction planted for a model), runs
of one point or less, and text in the slide's background colour on a shape with no fill and nothing
drawn under it. A model would answer from what a reviewer of the deck never sees, as with the
hidden text of PDF, DOCX and HTML (pdf/hidden_text.py, docx_wrappers.py, html_chrome.py).

Kept on purpose: hidden *slides* (PowerPoint skips them in a show but shows them to every
editor), speaker notes (read on purpose, slides.py), white text on a filled shape, a picture, a
table, a placeholder (its layout may fill it) or any shape of the slide, its layout or its master
drawn under it, and any colour this module cannot resolve (gradients, pictures, tints)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

P = "http://schemas.openxmlformats.org/presentationml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_SHAPES = tuple(f"{{{P}}}{tag}" for tag in ("sp", "grpSp", "pic", "graphicFrame", "cxnSp", "contentPart"))
_FILLS = tuple(f"{{{A}}}{tag}" for tag in ("solidFill", "gradFill", "blipFill", "pattFill", "grpFill"))
_TRUE = ("1", "true", "on")
_MAX_UNSEEN_SIZE = 100  # a:rPr sz, hundredths of a point: 1 pt, the least PowerPoint allows, nobody reads
_SCHEME_DEFAULTS = {"bg1": "lt1", "tx1": "dk1", "bg2": "lt2", "tx2": "dk2"}  # when a master has no clrMap


@dataclass(frozen=True)
class _Box:
    """A shape's rectangle in slide units (EMU)."""

    x: int
    y: int
    cx: int
    cy: int

    def meets(self, other: _Box) -> bool:
        return self.x < other.x + other.cx and other.x < self.x + self.cx and \
            self.y < other.y + other.cy and other.y < self.y + self.cy


_EVERYWHERE = _Box(-(2**62), -(2**62), 2**63, 2**63)  # a shape without a position may be anywhere


def unseen_removed(presentation: Any) -> int:
    """Each slide of a python-pptx `presentation` with the text PowerPoint does not show taken
    out, in place; the characters taken out (0: nothing changed)."""
    slide_box = _Box(0, 0, int(presentation.slide_width or 0), int(presentation.slide_height or 0))
    themes: dict[int, dict[str, str]] = {}
    removed = 0
    for slide in presentation.slides:
        tree = slide.shapes._spTree
        removed += _hidden_shapes_removed(tree, slide_box)
        removed += _tiny_runs_removed(tree)
        master = slide.slide_layout.slide_master
        scheme = themes.setdefault(id(master.part), _theme_scheme(master))
        removed += _background_coloured_runs_removed(slide, _Colours(slide, scheme))
    return removed


def _hidden_shapes_removed(tree: Any, slide_box: _Box) -> int:
    """Shapes hidden in the selection pane (at any depth), and top-level shapes lying wholly
    outside the slide (a group's members are placed in the group's own coordinates)."""
    removed = 0
    for shape in list(tree.iter(*_SHAPES)):
        if shape.getparent() is None:
            continue  # inside a group already removed
        properties = _non_visual(shape)
        hidden = properties is not None and (properties.get("hidden") or "").lower() in _TRUE
        box = _box(shape) if shape.getparent() is tree else None
        if hidden or (box is not None and slide_box.cx and not box.meets(slide_box)):
            removed += _characters(shape)
            shape.getparent().remove(shape)
    return removed


def _tiny_runs_removed(tree: Any) -> int:
    removed = 0
    for run in list(tree.iter(f"{{{A}}}r")):
        size = _int(run.find(f"{{{A}}}rPr"), "sz")
        if size is not None and size <= _MAX_UNSEEN_SIZE:
            removed += _characters(run)
            run.getparent().remove(run)
    return removed


def _background_coloured_runs_removed(slide: Any, colours: _Colours) -> int:
    """Runs in the background's colour on an unfilled shape that nothing of the slide (drawn
    before it), its layout or its master overlaps. A layout's or master's placeholders are
    prompts for the editor, not drawn on the slide; their other shapes are."""
    background = colours.background()
    if background is None:
        return 0
    layout = slide.slide_layout
    underneath = [_box_of(shape) for owner in (layout, layout.slide_master) for shape in owner.shapes
                  if not shape.is_placeholder and _paints(shape)]
    removed = 0
    for shape in slide.shapes:
        box = _box_of(shape)
        if _paints(shape):
            underneath.append(box)
            continue
        if shape._element.tag != f"{{{P}}}sp" or any(box.meets(under) for under in underneath):
            continue
        for run in list(shape._element.iter(f"{{{A}}}r")):
            if colours.of_run(run) == background:
                removed += _characters(run)
                run.getparent().remove(run)
    return removed


def _paints(shape: Any) -> bool:
    """Whether `shape` paints something text could sit on: a picture, table, chart, group, or a
    shape filled by itself, its style or (a placeholder) the layout and master placeholders it
    inherits from. Lines do not count."""
    tag = shape._element.tag
    if tag == f"{{{P}}}cxnSp":
        return False
    if tag != f"{{{P}}}sp":
        return True
    base = shape
    while base is not None:
        if _filled(base._element):
            return True
        base = getattr(base, "_base_placeholder", None) if getattr(base, "is_placeholder", False) else None
    return False


def _box_of(shape: Any) -> _Box:
    """The shape's rectangle, a placeholder's inherited from its layout; anywhere when unknown."""
    try:
        values = (shape.left, shape.top, shape.width, shape.height)
    except (AttributeError, ValueError, TypeError):
        return _EVERYWHERE
    if any(value is None for value in values):
        return _EVERYWHERE
    x, y, cx, cy = (int(value) for value in values)
    return _Box(x, y, cx, cy)


def _filled(shape: Any) -> bool:
    properties = shape.find(f"{{{P}}}spPr")
    if properties is not None and any(properties.find(fill) is not None for fill in _FILLS):
        return True
    reference = shape.find(f"{{{P}}}style/{{{A}}}fillRef")
    return reference is not None and reference.get("idx", "0") != "0"


class _Colours:
    """Colours of one slide resolved to RRGGBB through its colour map and its master's theme;
    None wherever the colour is not one plain value."""

    def __init__(self, slide: Any, scheme: dict[str, str]) -> None:
        self._slide = slide
        self._layout = slide.slide_layout
        self._master = self._layout.slide_master
        self._map = _colour_map(slide, self._layout, self._master)
        self._scheme = scheme

    def background(self) -> str | None:
        """The slide's background colour: its own, else its layout's, else its master's; white
        when none sets one (what PowerPoint paints)."""
        for owner in (self._slide, self._layout, self._master):
            background = owner._element.find(f"{{{P}}}cSld/{{{P}}}bg")
            if background is None:
                continue
            fill = background.find(f"{{{P}}}bgPr/{{{A}}}solidFill")
            if fill is not None:
                return self._colour(_only_child(fill))
            reference = background.find(f"{{{P}}}bgRef")
            return self._colour(_only_child(reference)) if reference is not None and reference.get("idx") in (
                "1001",) else None  # bgRef 1001 is the theme's first background fill: a plain colour
        return "FFFFFF"

    def of_run(self, run: Any) -> str | None:
        fill = run.find(f"{{{A}}}rPr/{{{A}}}solidFill")
        return self._colour(_only_child(fill)) if fill is not None else None

    def _colour(self, element: Any) -> str | None:
        if element is None or len(element):
            return None  # a tint, shade or alpha makes it another colour
        if element.tag == f"{{{A}}}srgbClr":
            return (element.get("val") or "").upper() or None
        if element.tag == f"{{{A}}}schemeClr":
            name = element.get("val") or ""
            return self._scheme.get(self._map.get(name, name))
        return None


def _colour_map(slide: Any, layout: Any, master: Any) -> dict[str, str]:
    """bg1/tx1/bg2/tx2 to theme slots: the master's map unless the slide or layout overrides it."""
    for owner in (slide, layout):
        override = owner._element.find(f"{{{P}}}clrMapOvr/{{{A}}}overrideClrMapping")
        if override is not None:
            return dict(override.attrib)
    mapping = master._element.find(f"{{{P}}}clrMap")
    return dict(mapping.attrib) if mapping is not None else dict(_SCHEME_DEFAULTS)


def _theme_scheme(master: Any) -> dict[str, str]:
    """The master's theme colours (dk1, lt1, accent1, ...) as RRGGBB; none when the theme is
    missing or unreadable (the deck still parses; no colour rule applies)."""
    from lxml import etree
    from pptx.opc.constants import RELATIONSHIP_TYPE as RT

    try:
        blob = master.part.part_related_by(RT.THEME).blob
    except (KeyError, AttributeError):
        return {}
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    try:
        scheme = etree.fromstring(blob, parser).find(f".//{{{A}}}clrScheme")
    except etree.XMLSyntaxError:
        return {}  # PowerPoint repairs a broken theme with its own: its colours are not known here
    colours: dict[str, str] = {}
    for slot in scheme if scheme is not None else ():
        value = _only_child(slot)
        if value is None:
            continue
        hex_value = value.get("lastClr") if value.tag == f"{{{A}}}sysClr" else value.get("val")
        if hex_value and not len(value):
            colours[etree.QName(slot).localname] = hex_value.upper()
    return colours


def _non_visual(shape: Any) -> Any:
    for child in shape:
        if child.tag.startswith(f"{{{P}}}nv"):
            return child.find(f"{{{P}}}cNvPr")
    return None


def _box(shape: Any) -> _Box | None:
    """The shape's offset and extent, from `a:xfrm` (shapes, pictures, groups) or `p:xfrm`
    (graphic frames); None when it has none (a placeholder placed by its layout)."""
    for path in (f"{{{P}}}spPr/{{{A}}}xfrm", f"{{{P}}}grpSpPr/{{{A}}}xfrm", f"{{{P}}}xfrm"):
        transform = shape.find(path)
        if transform is None:
            continue
        offset, extent = transform.find(f"{{{A}}}off"), transform.find(f"{{{A}}}ext")
        values = [_int(offset, "x"), _int(offset, "y"), _int(extent, "cx"), _int(extent, "cy")]
        if None in values:
            return None
        x, y, cx, cy = (int(v) for v in values if v is not None)
        return _Box(x, y, cx, cy)
    return None


def _only_child(element: Any) -> Any:
    if element is None:
        return None
    children = [child for child in element if isinstance(child.tag, str)]
    return children[0] if len(children) == 1 else None


def _int(element: Any, name: str) -> int | None:
    if element is None:
        return None
    try:
        return int(element.get(name, ""))
    except ValueError:
        return None


def _characters(element: Any) -> int:
    return sum(len(text.text or "") for text in element.iter(f"{{{A}}}t"))
