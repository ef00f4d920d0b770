"""Parse time of PDF pages of many vector drawings (plans, maps, dense plots), against another
checkout: PyMuPDF's table finder is skipped on a page of more rules than a table holds
(parsing/pdf/tables.py MAX_RULES), and a shape drawn many times over counts as one rule.

    git worktree add /tmp/before <commit>
    python bench/bench_pdf_drawings.py --against /tmp/before

Generated, seeded: plan sheets (A3, short horizontal and vertical wall segments, 30 labels) of
5,000 to 50,000 segments, a three-sheet plan set, one 5 pt square drawn 80,000 times (2 KB), a
black box drawn 80,000 times over a word (a redaction repeated), a scatter plot of 80,000
filled squares drawn after text,
and a ruled table of 30 x 6 cells with a header row (a page the finder must still search); real: the corpus PDF
with the most drawings (geotopo lecture notes, 117 pages). Each case is parsed through
`parse_document`, best of --repeat, in a fresh process per tree; the tables found and the pages
warned of more rules than a table holds ("warned") are printed beside the times, so a change in
what is read shows too.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GEOTOPO = ROOT.parent / "shared" / "corpus" / "docs" / "pdf" / "geotopo_lecture_notes_de_117p.pdf"


def plan_pdf(segments: int, sheets: int = 1) -> bytes:
    import pymupdf

    rng = random.Random(7)
    doc = pymupdf.open()
    for sheet in range(sheets):
        page = doc.new_page(width=1190, height=842)
        shape = page.new_shape()
        for _ in range(segments):
            x, y = rng.uniform(20, 1170), rng.uniform(20, 820)
            end = (x + rng.uniform(5, 40), y) if rng.random() < 0.5 else (x, y + rng.uniform(5, 40))
            shape.draw_line((x, y), end)
        shape.finish(color=(0, 0, 0), width=0.3)
        shape.commit()
        for i in range(30):
            page.insert_text((rng.uniform(20, 1100), rng.uniform(30, 820)), f"Room {sheet}-{i} storage", fontsize=6)
    return doc.tobytes(deflate=True)


def raw_pdf(content: bytes) -> bytes:
    """A one-page PDF (US Letter, Helvetica as /F1) of this content stream, compressed: a shape
    repeated in it costs a few bytes a thousand times."""
    import zlib

    stream = zlib.compress(content, 9)
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length %d /Filter /FlateDecode >>stream\n" % len(stream) + stream + b"\nendstream",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


def _line(x: int, y: int, text: str) -> bytes:
    return b"BT /F1 12 Tf %d %d Td (%s) Tj ET\n" % (x, y, text.encode())


def repeated_square_pdf(times: int) -> bytes:
    """A line of text and one 5 pt square drawn `times` times beside it."""
    return raw_pdf(_line(72, 700, "A page with one square drawn over and over.") + b"0 0 1 rg\n" + b"100 100 5 5 re f\n" * times)


def boxed_over_pdf(times: int) -> bytes:
    """A line of text, a black box drawn `times` times over its last word, and a line below."""
    box = b"0 0 0 rg\n187 690 120 20 re f\n"  # x 187-307, y 690-710: over "SECRETWORD"
    return raw_pdf(_line(72, 700, "Kept words here then SECRETWORD") + _line(72, 650, "The line below stays readable.") + box * times)


def scatter_pdf(points: int) -> bytes:
    """A caption, then a scatter plot of `points` filled 4 pt squares below it, then a note
    drawn after the plot: every square comes after text in the drawing order, none is over it."""
    rng = random.Random(3)
    squares = b"".join(b"%.1f %.1f 4 4 re f\n" % (rng.uniform(72, 540), rng.uniform(100, 600)) for _ in range(points))
    return raw_pdf(_line(72, 700, "Figure 3: measured load per hour") + b"0 0 1 rg\n" + squares
                   + b"0 0 0 rg\n" + _line(72, 660, "The plot shows every sample."))


def table_pdf() -> bytes:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    for row in range(31):
        page.draw_line((50, 80 + row * 20), (530, 80 + row * 20), width=0.5)
    for col in range(7):
        page.draw_line((50 + col * 80, 80), (50 + col * 80, 680), width=0.5)
    for col, header in enumerate(("Room", "Floor", "Area", "Use", "Doors", "Windows")):
        page.insert_text((55 + col * 80, 94), header, fontsize=8)
    for row in range(1, 30):
        for col in range(6):
            page.insert_text((55 + col * 80, 94 + row * 20), f"cell {row}-{col}", fontsize=8)
    return doc.tobytes(deflate=True)


def cases() -> dict[str, tuple[str, bytes]]:
    out = {f"plan sheet, {n:,} segments": ("plan.pdf", plan_pdf(n)) for n in (5_000, 20_000, 50_000)}
    out["plan set, 3 sheets x 30,000"] = ("set.pdf", plan_pdf(30_000, sheets=3))
    out["one square drawn 80,000 times"] = ("square.pdf", repeated_square_pdf(80_000))
    out["one box over text, 80,000 times"] = ("boxed.pdf", boxed_over_pdf(80_000))
    out["scatter plot, 80,000 squares"] = ("scatter.pdf", scatter_pdf(80_000))
    out["ruled table 30 x 6"] = ("table.pdf", table_pdf())
    out["geotopo lecture notes (corpus)"] = ("geotopo.pdf", GEOTOPO.read_bytes())
    return out


def measure(repeat: int) -> dict[str, list]:
    from rag_pipeline.parsing import parse_document
    from rag_pipeline.parsing.config import ParseLimits

    limits = ParseLimits(ocr=False, max_seconds=900, max_pages=1000)
    parse_document(table_pdf(), "warm.pdf", limits)
    results = {}
    for name, (file_name, data) in cases().items():
        best, doc = float("inf"), None
        for _ in range(repeat):
            start = time.perf_counter()
            doc = parse_document(data, file_name, limits)
            best = min(best, time.perf_counter() - start)
        tables = sum(e.kind == "table" for e in doc.elements)
        ruled = sum("ruled lines" in w for w in doc.warnings)
        results[name] = [len(data), best, tables, ruled]
    return results


def main() -> None:
    from tree_runs import figures_per_tree, tree_arguments  # bench/ is on the path of a script run from it

    found = figures_per_tree(__file__, tree_arguments(__doc__), measure)
    if found is None:
        return
    after, before = found
    print(f"{'case':<34}{'KB':>7}{'after s':>9}{'tables':>7}{'warned':>7}" + (f"{'before s':>10}{'tables':>7}{'ratio':>8}" if before else ""))
    for name, (size, seconds, tables, warned) in after.items():
        line = f"{name:<34}{size / 1024:>7.0f}{seconds:>9.2f}{tables:>7}{warned:>7}"
        if before:
            _, b_seconds, b_tables, _ = before[name]
            line += f"{b_seconds:>10.2f}{b_tables:>7}{b_seconds / seconds:>7.1f}x"
        print(line)


if __name__ == "__main__":
    main()
