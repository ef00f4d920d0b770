"""Parse time of PDFs set with letter spacing, drop caps and boxes drawn over text
(parsing/pdf/letter_spacing.py, drop_caps.py, covered_text.py) against the same pages set
plainly, in one run.

Generated documents of --pages pages, each of --lines lines ("SECTION NUMBER 07 OF THE REPORT"):
set plainly (Tc 0), set with character spacing (Tc 4: every line is rewritten from PyMuPDF's
rawdict), set as paragraphs each opened by a 40 pt drop cap, and set plainly with a black box
drawn over each line's last two words (every line read again from the text trace). Best of
--repeat, seconds, and the ratio to the plain pages; whether the text came out as words (and the
covered words not at all) is checked and printed.

    python bench/bench_pdf_typography.py [--pages 200] [--lines 40] [--repeat 3] [--tree OTHER_CHECKOUT]

`--tree` parses with another checkout's rag_pipeline (the code before a change) instead.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pymupdf

ROOT = Path(__file__).resolve().parent.parent


def document(pages: int, lines: int, setting: str) -> bytes:
    """A PDF of `pages` pages of `lines` lines, set plainly, letter-spaced or with drop caps."""
    out = pymupdf.open()
    for _ in range(pages):
        page = out.new_page()
        page.insert_text((72, 72), "x", fontsize=11)  # registers Helvetica as the page's font
        name = page.get_fonts()[0][4]
        rows = []
        for i in range(lines):
            y = 760 - 18 * i
            if setting == "drop caps" and i % 4 == 0:
                rows.append(f"BT /{name} 40 Tf 72 {y - 26} Td (T) Tj ET")
            indent = 100 if setting == "drop caps" and i % 4 in (0, 1) else 72
            text = f"he section {i:02d} of the report" if setting == "drop caps" and i % 4 == 0 else f"SECTION NUMBER {i:02d} OF THE REPORT"
            tracking = 4 if setting == "letter-spaced" else 0
            rows.append(f"BT /{name} 12 Tf {tracking} Tc {indent} {y} Td ({text}) Tj ET")
            if setting == "boxes over text":  # drawn after the line, over "THE REPORT"
                start = indent + pymupdf.get_text_length(text.rsplit(" ", 2)[0] + " ", fontsize=12)
                rows.append(f"0 g {start:.2f} {y - 4:.2f} 200 16 re f")
        out.update_stream(page.get_contents()[0], "\n".join(rows).encode("latin-1"))
    return out.tobytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--lines", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tree", type=Path, default=ROOT, help="checkout whose rag_pipeline is timed")
    args = parser.parse_args()
    sys.path.insert(0, str(args.tree.resolve()))
    from rag_pipeline.parsing import parse_document

    print(f"tree {args.tree}, {args.pages} pages x {args.lines} lines")
    plain = None
    for setting in ("plain", "letter-spaced", "drop caps", "boxes over text"):
        data = document(args.pages, args.lines, setting)
        spent = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            parsed = parse_document(data, f"{setting}.pdf")
            spent.append(time.perf_counter() - started)
        text = "\n".join(e.text for e in parsed.elements)
        words = text.count("SECTION NUMBER") + text.count("The section")
        if setting == "boxes over text":
            words -= text.count("REPORT")  # a covered word that came through counts against
        plain = plain or min(spent)
        print(f"{setting:14} {min(spent):6.2f} s  {min(spent) / plain:5.2f}x plain   lines read as words: "
              f"{words} of {args.pages * args.lines}")


if __name__ == "__main__":
    main()
