"""Warm-up of a parser process: parse one tiny document of every supported kind.

The parsing libraries (PyMuPDF, unstructured and everything its partitioners load on first
use: lxml, python-docx, python-pptx, the e-mail and Markdown stacks, NLP tokenisers) cost
seconds to import. A worker that paid them during its first real file would charge them to
that file's time limit, and on a busy machine a fresh worker after a timeout would time out
again on the next file. Parsing real, tiny documents reaches every lazy import a first file
would reach, without keeping a list of modules in step with the libraries.
"""

from __future__ import annotations

import io

from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.types import ParseError

_TEXT = "Warm-up heading\n\nThe parser process loads its libraries before it is timed.\n"


_MARKDOWN = ("# Warm-up heading\n\n" + _TEXT + "\n| a | b |\n|---|---|\n| 1 | 2 |\n").encode()


STACKS = ("light", "text", "full")  # what a parser process loads; each stack holds the ones before it


def stack_for(kind: str) -> str:
    """The stack a file of `kind` needs: Markdown only python-markdown and lxml
    (parsing.LIGHT_KINDS), plain text also spaCy for its possible headings (text_direct.py),
    every other kind PyMuPDF and unstructured's partitioners."""
    from rag_pipeline.parsing import LIGHT_KINDS

    return "light" if kind in LIGHT_KINDS else "text" if kind == "text" else "full"


def sample_documents(stack: str = "full") -> dict[str, bytes]:
    """One small, valid document per supported file name suffix of the kinds `stack` parses."""
    if stack == "light":
        return {"warmup.md": _MARKDOWN}
    if stack == "text":
        return {"warmup.md": _MARKDOWN, "warmup.txt": _TEXT.encode()}
    import docx
    import pptx
    import pymupdf

    pdf = pymupdf.open()
    pdf.new_page().insert_text((72, 72), _TEXT, fontsize=11)
    word = docx.Document()
    word.add_heading("Warm-up heading", level=1)
    word.add_paragraph("The parser process loads its libraries before it is timed.")
    word.add_table(rows=2, cols=2).cell(0, 0).text = "cell"
    word_bytes = io.BytesIO()
    word.save(word_bytes)
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Warm-up heading"
    slide.placeholders[1].text = "The parser process loads its libraries before it is timed."
    deck_bytes = io.BytesIO()
    deck.save(deck_bytes)
    return {
        "warmup.txt": _TEXT.encode(),
        "warmup.md": _MARKDOWN,
        "warmup.html": (
            "<html><head><title>t</title></head><body><main><h1>Warm-up heading</h1><p>"
            + _TEXT + "</p><table><tr><th>a</th></tr><tr><td>1</td></tr></table></main></body></html>"
        ).encode(),
        "warmup.eml": (
            "From: a@example.com\nTo: b@example.com\nSubject: Warm-up\nDate: Mon, 1 Jun 2026 10:00:00 +0000\n"
            "Content-Type: text/plain; charset=utf-8\n\n" + _TEXT
        ).encode(),
        "warmup.xml": ("<doc><sec><title>Warm-up heading</title><p>" + _TEXT + "</p></sec></doc>").encode(),
        "warmup.pdf": pdf.tobytes(),
        "warmup.docx": word_bytes.getvalue(),
        "warmup.pptx": deck_bytes.getvalue(),
    }


def warm_up(limits: ParseLimits = ParseLimits(ocr=False), stack: str = "full") -> list[str]:
    """Parse every sample of `stack`; return the names that failed (a warm-up failure is not
    fatal: the real file will report the real error)."""
    from rag_pipeline.parsing import parse_document

    failed = []
    for name, data in sample_documents(stack).items():
        try:
            parse_document(data, name, limits)
        except ParseError:
            failed.append(name)
    return failed
