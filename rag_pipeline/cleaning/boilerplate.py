"""Per-document removal of page furniture: running headers, running footers and page numbers.

A running header is text that the layout repeats on many pages at the same place in the top or
bottom margin ("April 16, 2018 | Cybersecurity Framework | Version 1.1", "Page 3 of 40"). Left
in, it lands in every chunk of the page, pollutes embeddings and matches every query about the
document's title. It is recognised by repetition, never by wording, so the rules work in any
language:

* an element counts only when it sits in the top or bottom margin band of its page (bbox and
  page_height, which the PDF parser records);
* digits are ignored when comparing ("Page 3 of 40" = "Page 4 of 40"), as are the page numbers
  glued to a header ("... NIST.CSWP.04162018 ii");
* the same text must recur on at least 3 pages at about the same height; odd and even pages
  are compared separately as well, so alternating author/title headers are found;
* a bare page number in a margin band is dropped even in short documents, as nothing else
  can be learnt from a one- or two-page file.

Elements without a bbox (formats without pages) are left alone, except for `page_header` and
`page_footer` elements, which a parser only emits for known running headers (DOCX header parts).
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict

from rag_pipeline.parsing.types import Element

# Bump when a rule changes what is removed: the version is stored with each cleaned document.
CLEANER_VERSION = "boilerplate1"

_BAND = 0.10  # share of the page height, top and bottom, where running headers and footers live
_OUTER_BAND = 0.25  # the outermost elements of a page count as margin lines down to this share
_COVERAGE = 0.2  # a repeated text on this share of the pages needs no run of consecutive pages
_MIN_PAGES = 3  # a text must recur on this many pages to count as a running header/footer
_Y_TOLERANCE = 10.0  # points: how far from its usual height a running header may move
_MAX_LENGTH = 300  # running headers are short; a long text in the margin is content

# lower-case roman page numbers of front matter, i .. xlix
_ROMAN = r"(?-i:(?=[ivxl]+\b)(?:xl|x{0,3})(?:ix|iv|v?i{0,3}))"
_PAGE_NUMBER_RE = re.compile(
    rf"^(?:(?:page|p\.|pg\.?|seite|s\.|strana|str\.|pagina|página|sivu|sida)\s*)?"
    rf"[-\u2013\u2014\[(]?\s*(?:\d{{1,5}}|{_ROMAN})\s*[-\u2013\u2014\])]?"
    rf"(?:\s*(?:of|von|/|z|sur|de)\s*\d{{1,4}})?$",
    re.IGNORECASE,
)
_NUMBER_AT_EDGE_RE = re.compile(r"^\d{1,5}\s|\s\d{1,5}$")
_SLOT_TOLERANCE = 2.0  # points: a running header slot is printed at one fixed height
_EDGE_ROMAN_RE = re.compile(rf"(?:^{_ROMAN}\s+|\s+{_ROMAN}$)", re.IGNORECASE)

COUNT_KEYS = ("running_header", "running_footer", "page_number")


def strip_page_boilerplate(elements: list[Element]) -> tuple[list[Element], dict[str, int]]:
    """Return the elements without page furniture, and how many of each kind were removed."""
    counts = {key: 0 for key in COUNT_KEYS}
    positioned = [e for e in elements if _is_positioned(e) and e.kind not in ("page_header", "page_footer", "table")]
    bands = _margin_bands(positioned)
    pages = {e.page for e in positioned}
    repeated = _repeated_keys(positioned, bands, len(pages)) if len(pages) >= _MIN_PAGES else {}
    slots = _header_slots(positioned, bands, repeated, len(pages))
    kept: list[Element] = []
    for element in elements:
        verdict = _verdict(element, bands.get(id(element)), repeated, slots)
        if verdict is None:
            kept.append(element)
        else:
            counts[verdict] += 1
    return kept, counts


def _verdict(
    element: Element, band: str | None, repeated: dict[tuple[str, str], float], slots: list[tuple[str, float]]
) -> str | None:
    """Which kind of furniture `element` is, or None to keep it."""
    if element.kind == "page_header":
        return "running_header"
    if element.kind == "page_footer":
        return "running_footer"
    if band is None:
        return None
    if is_page_number(element.text) and _band(element, _BAND):  # not a number set large under a title
        return "page_number"
    if (band, _key(element.text)) in repeated or _in_slot(element, band, slots):
        return "running_header" if band == "top" else "running_footer"
    return None


def _in_slot(element: Element, band: str, slots: list[tuple[str, float]]) -> bool:
    """A short line carrying a page number, at exactly the height where this document prints its
    running headers: a section header used on too few pages to recur by itself
    ("10 1.3. STETIGKEIT" on two pages of lecture notes)."""
    if len(element.text) > 120 or not _NUMBER_AT_EDGE_RE.search(element.text):
        return False
    centre = (element.bbox[1] + element.bbox[3]) / 2  # type: ignore[index]
    return any(band == b and abs(centre - y) <= _SLOT_TOLERANCE for b, y in slots)


def _header_slots(
    elements: list[Element], bands: dict[int, str], repeated: dict[tuple[str, str], float], page_count: int
) -> list[tuple[str, float]]:
    """(band, height) where running headers carrying page numbers sit on a good share of pages."""
    pages_at: dict[tuple[str, float], set[int]] = defaultdict(set)
    for element in elements:
        band = bands.get(id(element))
        if band is None or not _NUMBER_AT_EDGE_RE.search(element.text):
            continue
        group = (band, _key(element.text))
        if group in repeated:
            pages_at[(band, round(repeated[group]))].add(element.page)  # type: ignore[arg-type]
    return [slot for slot, pages in pages_at.items() if len(pages) >= _COVERAGE * page_count]


def is_page_number(text: str) -> bool:
    """A bare page number: "12", "- 12 -", "Page 3 of 40", "iv", "Seite 7"."""
    text = text.strip()
    return 0 < len(text) <= 20 and bool(_PAGE_NUMBER_RE.match(text))


def _is_positioned(element: Element) -> bool:
    return (
        element.page is not None
        and element.bbox is not None
        and bool(element.page_height)
        and bool(element.text.strip())
    )


def _margin_bands(elements: list[Element]) -> dict[int, str]:
    """id(element) -> 'top' / 'bottom' for the elements where page furniture can sit: inside the
    fixed margin bands, or the outermost two elements of the page when they lie in its outer
    quarter (pages with wide margins put the running header lower than the fixed band)."""
    bands: dict[int, str] = {}
    by_page: dict[int, list[Element]] = defaultdict(list)
    for element in elements:
        by_page[element.page].append(element)  # type: ignore[index]
        band = _band(element, _BAND)
        if band:
            bands[id(element)] = band
    for page_elements in by_page.values():
        top = sorted(page_elements, key=lambda e: e.bbox[1])[:2]  # type: ignore[index]
        bottom = sorted(page_elements, key=lambda e: -e.bbox[3])[:2]  # type: ignore[index]
        for element in top + bottom:
            band = _band(element, _OUTER_BAND)
            if band and len(element.text) <= _MAX_LENGTH:
                bands.setdefault(id(element), band)
    return bands


def _band(element: Element, share: float) -> str | None:
    """'top' or 'bottom' when the element sits in the outer `share` of its page height, else None.
    The centre decides, so a rotated margin note that reaches into the band still counts; its
    far edge must stay near the band, so a body paragraph starting high up does not."""
    x0, y0, x1, y1 = element.bbox  # type: ignore[misc]
    height = float(element.page_height)  # type: ignore[arg-type]
    centre = (y0 + y1) / 2
    if centre <= share * height and y1 <= 2 * share * height:
        return "top"
    if centre >= (1 - share) * height and y0 >= (1 - 2 * share) * height:
        return "bottom"
    return None


def _key(text: str) -> str:
    """Comparison key: case and spacing folded, numbers (also dotted section numbers and dates)
    and edge roman numerals ignored."""
    text = re.sub(r"\s+", " ", text).strip()
    text = _EDGE_ROMAN_RE.sub(" ", text).strip().casefold()
    return re.sub(r"\d+(?:[.\-/]\d+)*", "#", text)  # "2.3.59.1.6", "12-12-2022" and "7" alike


def _repeated_keys(elements: list[Element], bands: dict[int, str], page_count: int) -> dict[tuple[str, str], float]:
    """(band, key) pairs that recur at about the same height on enough pages (running headers
    and footers), with that height (vertical centre)."""
    heights: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
    for element in elements:
        band = bands.get(id(element))
        if band is None or len(element.text) > _MAX_LENGTH:
            continue
        key = _key(element.text)
        if not re.search(r"[^\W\d_]", key):
            continue  # bare numbers are handled as page numbers
        centre = (element.bbox[1] + element.bbox[3]) / 2  # type: ignore[index]
        heights[(band, key)].setdefault(element.page, centre)  # type: ignore[arg-type]
    return {
        group: statistics.median(by_page.values())
        for group, by_page in heights.items()
        if _recurs(by_page, page_count)
    }


def _recurs(by_page: dict[int, float], page_count: int) -> bool:
    """True when the text sits at about the same height on at least _MIN_PAGES pages that are
    either a good share of the document or a run of consecutive pages (every page, or every
    other page for alternating headers). Same-looking rows of different forms or tables that
    happen to end up in a margin band are neither."""
    middle = statistics.median(by_page.values())
    pages = sorted(p for p, y in by_page.items() if abs(y - middle) <= _Y_TOLERANCE)
    if len(pages) < _MIN_PAGES:
        return False
    if len(pages) >= _COVERAGE * page_count:
        return True
    return _longest_run(pages, 1) >= _MIN_PAGES or _longest_run(pages, 2) >= _MIN_PAGES


def _longest_run(pages: list[int], step: int) -> int:
    """Longest chain p, p+step, p+2*step, ... within `pages` (sorted)."""
    present = set(pages)
    best = 0
    for page in pages:
        if page - step in present:
            continue
        length = 1
        while page + length * step in present:
            length += 1
        best = max(best, length)
    return best
