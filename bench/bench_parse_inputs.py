"""Parse time of the input rules added in session 20, on the real documents of the shared corpus
and on generated hostile shapes, against the code before them.

    python bench/bench_parse_inputs.py [--against TREE] [--repeat 3]

Each case is parsed through `rag_pipeline.parsing.parse_document` (the function every sync
calls), best of `--repeat`, in milliseconds; a case that fails prints its error's first words.
Real: every HTML, Markdown, DOCX and PPTX file of ../shared/corpus/docs (the rules read every
page: huge_tree HTML parsing, figure/details/math walks, the PPTX deck loaded once for hints and
hidden shapes, the DOCX equation and chunk checks). Hostile: a legacy page of 400 unclosed
<font> tags, 3,000 collapsed FAQ answers, 2,000 MathML formulas, a deck of 3,000 text boxes half
hidden, 2,000 Word equations, 0.4 MB of UTF-16 text (and the same in UTF-8), a Markdown list
indented 400 levels.
`--against TREE` runs the same in another checkout (e.g. `git worktree add /tmp/before 396917d`)
in a subprocess and prints both with the ratio; each tree runs twice, alternated, in fresh
processes, and its best is kept.
"""

from __future__ import annotations

import argparse
import codecs
import json
import subprocess
import sys
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT.parent / "shared" / "corpus" / "docs"


def _generated() -> dict[str, tuple[str, bytes]]:
    import pptx
    from docx import Document
    from docx.oxml import parse_xml
    from pptx.util import Inches

    legacy = "<html><body><h1>Handbook</h1>" + "".join(f"<font size=2>Part {i} of the handbook. " for i in range(400))
    faq = "<html><body><main><h1>FAQ</h1>" + "".join(
        f"<details><summary>Question {i}?</summary><p>Answer {i} in a sentence.</p></details>" for i in range(3_000))
    maths = "<html><body><main><h1>Notes</h1>" + "".join(
        f"<p>Item {i}: <math><mi>x</mi><mo>=</mo><msup><mi>y</mi><mn>{i}</mn></msup></math>.</p>" for i in range(2_000))
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Many shapes"
    for i in range(3_000):
        box = slide.shapes.add_textbox(Inches(i % 9), Inches(i % 7), Inches(1), Inches(0.3))
        box.text_frame.text = f"box {i}"
        if i % 2:
            box._element.nvSpPr.cNvPr.set("hidden", "1")
    deck_bytes = BytesIO()
    deck.save(deck_bytes)
    document = Document()
    ns = 'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"'
    for i in range(2_000):
        document.add_paragraph(f"Rate {i} is ")._p.append(parse_xml(f"<m:oMath {ns}><m:r><m:t>r={i}</m:t></m:r></m:oMath>"))
    docx_bytes = BytesIO()
    document.save(docx_bytes)
    wide = "".join(f"Paragraph {i} of the exported register.\n\n" for i in range(5_000))
    listing = "# Tasks\n\n" + "".join(" " * 4 * i + f"- item {i}\n" for i in range(400))
    return {
        "legacy 400 unclosed <font>": ("legacy.html", legacy.encode()),
        "3,000 <details> answers": ("faq.html", faq.encode()),
        "2,000 MathML formulas": ("maths.html", maths.encode()),
        "3,000 text boxes, half hidden": ("deck.pptx", deck_bytes.getvalue()),
        "2,000 Word equations": ("rates.docx", docx_bytes.getvalue()),
        "UTF-16 text, 0.4 MB": ("register.txt", codecs.BOM_UTF16_LE + wide.encode("utf-16-le")),
        "the same text in UTF-8": ("register.txt", wide.encode()),
        "list indented 400 levels": ("tasks.md", listing.encode()),
    }


def measure(root: Path, repeat: int) -> dict[str, float | str]:
    """Best milliseconds per case with the tree at `root` imported (an error's text instead)."""
    sys.path.insert(0, str(root))
    from rag_pipeline.parsing import ParseError, parse_document

    cases = {f"{p.parent.name}/{p.name}": (p.name, p.read_bytes()) for kind in ("html", "md", "docx", "pptx")
             for p in sorted((DOCS / kind).glob("*")) if p.suffix in (".html", ".md", ".docx", ".pptx")}
    cases.update(_generated())
    out: dict[str, float | str] = {}
    for label, (name, data) in cases.items():
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            try:
                parse_document(data, name)
            except ParseError as exc:
                out[label] = f"refused: {str(exc)[:40]}"
                break
            best = min(best, time.perf_counter() - start)
        else:
            out[label] = round(best * 1000, 1)
    return out


def _best(runs: list[dict[str, float | str]]) -> dict[str, float | str]:
    out: dict[str, float | str] = {}
    for run in runs:
        for label, value in run.items():
            old = out.get(label)
            out[label] = min(value, old) if isinstance(value, float) and isinstance(old, float) else old or value
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout to time the same way")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # the subprocess's output
    parser.add_argument("--tree", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure(args.tree, args.repeat)))
        return
    trees = [ROOT, args.against] if args.against else [ROOT]
    runs: dict[Path, list[dict[str, float | str]]] = {tree: [] for tree in trees}
    for _ in range(2):  # alternated, each in a fresh process: a load change hits both trees alike
        for tree in trees:
            done = subprocess.run([sys.executable, __file__, "--json", "--tree", str(tree), "--repeat", str(args.repeat)],
                                  capture_output=True, text=True, check=True, cwd=tree)
            runs[tree].append(json.loads(done.stdout.strip().splitlines()[-1]))
    now = _best(runs[ROOT])
    before = _best(runs[args.against]) if args.against else {}
    print(f"{'case':44} {'before ms':>22} {'now ms':>22} {'ratio':>6}")
    for label, value in now.items():
        old = before.get(label, "")
        ratio = f"{value / old:.2f}" if isinstance(value, float) and isinstance(old, float) and old else ""
        print(f"{label[:44]:44} {str(old)[:22]:>22} {str(value)[:22]:>22} {ratio:>6}")


if __name__ == "__main__":
    main()
