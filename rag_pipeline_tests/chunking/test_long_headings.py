"""Long headings and deep paths in the model input (chunking/model_prefix.py): every chunk says
its section path, so a heading of a hundred words (a paragraph styled as a heading, a shell
comment in a pasted example read as "# ...") used to take that much of every body's budget
under it, and one too long for the budget shredded the bodies and then vanished from the index."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_pipeline.chunking.chunks import Chunk, chunk_elements, section_prefix
from rag_pipeline.chunking.model_prefix import ELLIPSIS, MAX_HEADING_TOKENS, MAX_PATH_TOKENS, PATH_SEPARATOR
from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.types import Element

GENERALISATION = Path(__file__).resolve().parents[2] / "evalsets" / "generalisation" / "docs"
PARAGRAPH = ("Travel costs are reimbursed within ten working days once the receipts are filed with the "
             "finance office, and a claim without receipts is returned to the traveller.")


def _policy(heading: str, paragraphs: int = 40) -> list[Element]:
    return [Element("heading", "Travel Policy", level=1), Element("heading", heading, level=2)] + [
        Element("paragraph", f"Rule {i}. {PARAGRAPH}") for i in range(paragraphs)]


def _words(chunks: list[Chunk]) -> list[str]:
    return [w for c in chunks for w in c.text.split()]


def _path_line(chunk: Chunk) -> str:
    return chunk.search_prefix.rstrip("\n").split("\n")[-1]


@pytest.mark.parametrize("words", [60, 150, 400, 3000])
def test_a_long_heading_leaves_the_bodies_as_full_as_a_short_one_and_loses_no_word(embedder, words: int) -> None:
    count, limit = embedder.count_tokens, embedder.max_tokens
    short = chunk_elements(_policy("2 Claims"), count, limit)
    heading = " ".join(f"clause{i}" for i in range(words))
    chunks = chunk_elements(_policy(heading), count, limit)
    # the bodies fill about as they do under a short heading (the path's share is bounded); the
    # heading's own words take a few more
    body_chunks = [c for c in chunks if "Rule" in c.text]
    assert len(body_chunks) <= 1.5 * len(short), [c.token_count for c in chunks]
    assert min(c.token_count for c in body_chunks[:-1]) > limit // 2
    # every word of the heading is in a chunk's text; the stored path keeps it whole
    assert [w for w in _words(chunks) if w.startswith("clause")] == heading.split()
    assert all(c.section_path == ["Travel Policy", heading] for c in chunks)
    assert chunks[0].text.startswith("clause0 clause1 ")
    # the model input says it cut short, within its share, except in the chunk that reads it whole
    assert _path_line(chunks[0]) == "Travel Policy"
    for chunk in chunks[1:]:
        line = _path_line(chunk)
        assert line.startswith("Travel Policy > clause0 ") and line.endswith(ELLIPSIS)
        assert count([line.split(PATH_SEPARATOR)[1]])[0] <= MAX_HEADING_TOKENS
        assert chunk.token_count <= limit and chunk.search_text == chunk.search_prefix + chunk.text


def test_usual_headings_are_said_whole_as_before(embedder) -> None:
    """A path within both limits is the model input it always was (same text, same hash, the
    stored vectors reused)."""
    heading = "4.2 Costs and limits for every journey abroad, with the receipts each one needs"
    chunks = chunk_elements(_policy(heading, 3), embedder.count_tokens, embedder.max_tokens, identity="Handbook 2026")
    assert [c.search_prefix for c in chunks] == [section_prefix(["Travel Policy", heading], "Handbook 2026")]
    assert "4.2 Costs" not in chunks[0].text  # said by the path, not repeated as text


def test_a_deep_path_keeps_its_innermost_headings_within_the_share(embedder) -> None:
    count = embedder.count_tokens
    levels = [f"Part {i} on the rules for reimbursing travel costs of the staff of department {i}" for i in range(1, 7)]
    elements = [Element("heading", h, level=i + 1) for i, h in enumerate(levels)] + [Element("paragraph", PARAGRAPH)]
    chunks = chunk_elements(elements, count, embedder.max_tokens)
    [chunk] = [c for c in chunks if c.text == PARAGRAPH]
    line = _path_line(chunk)
    assert count([line])[0] <= MAX_PATH_TOKENS
    assert line.startswith(ELLIPSIS + PATH_SEPARATOR) and line.endswith(PATH_SEPARATOR + levels[-1])
    assert chunk.section_path == levels  # stored whole: citations and the numbered-part search read it
    said = " ".join(c.search_text for c in chunks)  # the headings the path leaves out keep a chunk
    assert all(level in said for level in levels)


def test_outer_headings_a_deep_path_leaves_out_keep_a_chunk_of_their_own(embedder) -> None:
    """Six bodyless headings, then items at the innermost level: the items' paths say the outer
    headings as "…", so those are no longer carried by the paths and must keep their words."""
    levels = [f"Part {i} marker{i} on the rules for reimbursing travel costs of department {i}" for i in range(1, 7)]
    elements = [Element("heading", h, level=i + 1) for i, h in enumerate(levels)]
    for i in range(3):
        elements += [Element("heading", f"Item {i}", level=6), Element("paragraph", PARAGRAPH)]
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens)
    said = " ".join(c.search_text for c in chunks)
    assert all(f"marker{i}" in said for i in range(1, 7))
    assert sum("reimbursed" in c.text for c in chunks) == 3


def test_a_bodyless_long_heading_keeps_its_own_chunk_when_the_paths_below_say_it_cut(embedder) -> None:
    heading = " ".join(f"term{i}" for i in range(120))
    elements = [Element("heading", heading, level=1), Element("heading", "1 Scope", level=2),
                Element("paragraph", "The scope is the northern region.")]
    chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens)
    assert [w for w in _words(chunks) if w.startswith("term")] == heading.split()
    scope = [c for c in chunks if "northern" in c.text]
    assert len(scope) == 1 and _path_line(scope[0]).endswith(ELLIPSIS + PATH_SEPARATOR + "1 Scope")


def test_thousands_of_long_headings_chunk_every_word_within_the_limits(embedder) -> None:
    """Huge hostile input: 2,000 headings of 80 words, each over two lines of text (1.3 MB)."""
    elements = []
    for i in range(2000):
        elements.append(Element("heading", " ".join(f"h{i}w{j}" for j in range(80)), level=1 + i % 3))
        elements.append(Element("paragraph", f"Body {i}. {PARAGRAPH}"))
    count, limit = embedder.count_tokens, embedder.max_tokens
    chunks = chunk_elements(elements, count, limit)
    words = set(_words(chunks))
    assert all(f"h{i}w79" in words and f"{i}." in words for i in range(0, 2000, 97))
    for chunk in chunks:
        assert chunk.token_count <= limit and count([_path_line(chunk)])[0] <= MAX_PATH_TOKENS


def test_a_shell_comment_read_as_a_heading_in_a_real_man_page_no_longer_fills_the_chunks_under_it(embedder) -> None:
    """The Czech wget page of evalsets/generalisation: an example's "# Log in to the server ..."
    line is a Markdown heading of about 90 tokens over the rest of the page."""
    path = GENERALISATION / "man-cs_wget.md"
    parsed = parse_document(path.read_bytes(), path.name)
    count = embedder.count_tokens
    chunks = chunk_elements(parsed.elements, count, embedder.max_tokens, identity="wget")
    under = [c for c in chunks if any(h.startswith("Log in to the server.") for h in c.section_path)]
    assert len(under) > 20
    for chunk in under:
        shown = _path_line(chunk).split(PATH_SEPARATOR)
        assert all(count([h])[0] <= MAX_HEADING_TOKENS for h in shown)
    text = " ".join(c.text for c in chunks)
    assert "--load-cookies cookies.txt" in text and "http://example.com/interesting/article.php" in text
