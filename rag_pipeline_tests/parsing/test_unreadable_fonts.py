"""Text of a PDF font that has no Unicode map (parsing/pdf/unreadable.py): the corpus' IBM Redbook
set a sidebar in such a font, and the index held "]üìÜüéê •ìê °ê£ë†£ûÜüéê" for it. Such text is
left out with a warning that names the page and the font; text in Latin-script languages rich in
accents is kept whole."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.types import ParseError

GARBLED = "]üìÜüéê •ìê °ê£ë†£ûÜüéê †ë ∞†¶£ èÜ•ÜáÜ§ê Ü°°óîéÜ•î†ü§"  # as the Redbook's sidebar reads
ACCENTED = [  # real text whose share of Latin-1 letters is high, each in the page's other font
    "Þjóðskrá Íslands heldur utan um skráningu einstaklinga og fasteigna á Íslandi.",
    "Le comité a décidé à l'unanimité que la démolition du bâtiment aura lieu l'été prochain.",
    "Größenordnung für Übergänge: Fußgängerüberwege, Straßenmaße, Grünflächen.",
    "Ça déjà été où à près, ça été déjà où.",
]


def _pdf(lines: list[tuple[str, str]]) -> bytes:
    document = pymupdf.open()
    page = document.new_page()
    for row, (text, font) in enumerate(lines):
        page.insert_text((72, 72 + 18 * row), text, fontsize=11, fontname=font)
    return document.tobytes()


def test_the_redbook_sidebar_is_left_out_with_a_warning_and_its_page_kept(corpus_dir: Path) -> None:
    path = corpus_dir / "docs" / "pdf" / "ibm_redbook_redp5110_sampled.pdf"
    parsed = parse_document(path.read_bytes(), path.name)
    text = "\n".join(e.text for e in parsed.elements)
    assert "üìÜüéê" not in text and "Ü°°óîéÜ•î†ü§" not in text
    assert [w for w in parsed.warnings if "no readable text" in w] == [
        "page 3: 229 characters set in 'HelveticaNeueLTCom-Roman' map to no readable text (the PDF gives the font "
        "no Unicode map) and were left out; OCR the file to index them"]
    assert any(e.page == 3 and len(e.text) > 200 for e in parsed.elements), "the page's readable text stays"


def test_garbled_font_goes_and_the_accented_text_beside_it_stays() -> None:
    parsed = parse_document(_pdf([(t, "helv") for t in ACCENTED] + [(GARBLED, "tiro")]), "mixed.pdf")
    text = "\n".join(e.text for e in parsed.elements)
    assert GARBLED[:10] not in text
    for line in ACCENTED:
        assert line.replace("'", "\u2019") in text.replace("'", "\u2019")
    assert len(parsed.warnings) == 1 and "'Times-Roman'" in parsed.warnings[0]


@pytest.mark.parametrize("line", ACCENTED)
def test_accented_text_alone_is_never_taken_for_garbled(line: str) -> None:
    parsed = parse_document(_pdf([(line, "tiro")] * 3), "accents.pdf")
    assert parsed.warnings == [] and line[:20] in parsed.elements[0].text


def test_a_file_of_nothing_but_garbled_text_is_refused_saying_why() -> None:
    with pytest.raises(ParseError, match="no extractable text.*map to no readable text.*OCR the file"):
        parse_document(_pdf([(GARBLED, "tiro")] * 40), "garbled.pdf")


def test_a_hostile_font_name_is_shown_short_and_quoted() -> None:
    from rag_pipeline.parsing.pdf.unreadable import warning

    shown = warning(1, {"Evil\nFont" + "X" * 500: 300})  # a font's name is the file's to choose
    assert "\n" not in shown and len(shown) < 300 and "'Evil\\nFont" in shown
