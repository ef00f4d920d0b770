"""Markdown whose openers python-markdown would chase to the end of the text is escaped before
parsing, so a hostile file is indexed in seconds with its text instead of quarantined at the
parse limit; documents that need no escaping reach python-markdown unchanged
(rag_pipeline/parsing/markdown_openers.py)."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import markdown
import markdown.inlinepatterns as inline
import pytest

from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.markdown_direct import parse_markdown_direct
from rag_pipeline.parsing.markdown_openers import FAR, escaped_beyond, openers_escaped, reads_by_kind
from rag_pipeline.parsing.office.markdown_tables import normalize_markdown
from rag_pipeline.parsing.pool import Job, ParsePool
from rag_pipeline.parsing.types import ParseError
from rag_pipeline_tests.helpers import bench_module
from rag_pipeline_tests.parsing.test_markdown_direct import CONSTRUCTS, _generated

PROSE = ("The committee reviewed the retention schedule for payroll records and agreed that the "
         "archive keeps each version for seven years before it is destroyed. ")


def _bench():
    return bench_module("bench_markdown_openers")


def _text(markdown_text: str) -> str:
    """The elements' text, whitespace removed (a paragraph break moves spaces, not words)."""
    return re.sub(r"\s+", "", "".join(e.text for e in parse_markdown_direct(markdown_text) or []))


def _words(text: str) -> Counter:
    return Counter(re.findall(r"\w+", text))


def _letters(text: str) -> Counter:
    return Counter(re.findall(r"\w", text))


def _element_words(markdown_text: str) -> Counter:
    """Words of the elements, ticks taken out (an escaped code span shows its ticks: "`a`s")."""
    return _words(" ".join(e.text for e in parse_markdown_direct(markdown_text) or []).replace("`", ""))


def test_documents_that_need_no_escaping_reach_python_markdown_unchanged(corpus_dir: Path, tmp_path: Path) -> None:
    """The corpus' Markdown, generated documents, the direct parser's constructs and large but
    ordinary documents (thousands of links and code spans, a stray bracket in each of 2,000
    paragraphs) are not touched."""
    texts = [path.read_text(encoding="utf-8") for path in sorted((corpus_dir / "docs").rglob("*.md"))]
    texts += [path.read_text(encoding="utf-8") for path in _generated(tmp_path, 25)]
    texts += list(CONSTRUCTS.values())
    texts += [
        "".join(f"- [Project {i}](https://example.org/p/{i}) -- a `tool` for [x] (see [docs][d{i}])\n" for i in range(5_000)),
        " ".join(f"Call `f({i})` or [the guide](https://example.org/{i}#s) then ![fig](img/{i}.png)." for i in range(3_000)),
        "\n\n".join(f"Stray [ bracket and an (open paren in paragraph {i}. " + PROSE * 3 for i in range(2_000)),
    ]
    for text in texts:
        assert openers_escaped(text) is text, text[:80]


FAR_OPENERS = {
    "stray [ before a long paragraph": "Intro with a stray [ here. " + PROSE * 20 + "A [near link](http://x.org) ends it.",
    "stray ![ and [^": "Image ![ unclosed and note [^ unclosed. " + PROSE * 20,
    "unclosed link destination": "See [the guide](http://x.org/a_(b " + PROSE * 20 + " and `code` after.",
    "tag start without >": "If a<b holds then " + PROSE * 20 + " and `x < y` too.",
    "autolink start without >": "Mail <http://example.org/path " + PROSE * 20,
    "unclosed backticks": "Use `make` and ``unclosed ticks, ```three``` too. " + PROSE * 20,
    "escaped and fenced brackets stay": "\\[ not an opener \\` \n\n```\n[ in fence\n```\n\n[ open " + PROSE * 20,
    "in a list item and a quote": "- item [ open " + PROSE * 10 + "\n- next\n\n> quote [ open " + PROSE * 10,
}


@pytest.mark.parametrize("name", sorted(FAR_OPENERS))
def test_escaping_far_openers_keeps_the_text_of_every_element(name: str) -> None:
    """What a hostile text gets: each opener with no closer within FAR characters is escaped,
    and python-markdown renders it as the character it was."""
    text = normalize_markdown(FAR_OPENERS[name])
    escaped = escaped_beyond(text, FAR)
    assert escaped != text
    assert _text(escaped) == _text(text)


@pytest.mark.parametrize("shape", ["unclosed [", "nested [[a]", "link text, unclosed (", "tag starts without >",
                                   "backticks ``a`", "CDATA openers", "list item of ["])
def test_small_hostile_shapes_escaped_keep_their_text(shape: str) -> None:
    """The benchmark's shapes, small enough for the former parse: the same text after escaping
    (in pieces: a paragraph break goes before an escape every few thousand characters)."""
    text = normalize_markdown(_bench().hostile_text(shape, 3_000))
    escaped = openers_escaped(text, budget=0)
    assert escaped != text
    former, now = _text(text), _text(escaped)
    if shape.startswith("backticks"):  # code spans that were far are now their ticks and text
        assert now.replace("`", "") == former.replace("`", "")
    else:
        assert now == former


def test_a_megabyte_of_comparisons_without_a_closing_angle_is_escaped_and_keeps_its_text() -> None:
    """Not only attacks: 2,000 paragraphs that each compare "a<b", in a document with no ">",
    took python-markdown 69 s (the standard library's HTML parser reads from each "<b" to the
    end of the document). Each "<" is now an entity, rendered as the "<" it was, and no
    paragraph is broken (they are shorter than PIECE)."""
    text = "\n\n".join(f"Paragraph {i}: when a<b the archive keeps both. " + PROSE * 3 for i in range(2_000))
    escaped = openers_escaped(normalize_markdown(text))
    assert escaped.count("a&lt;b") == 1_999 and escaped.count("<") == 1  # the last one reads under FAR to the end
    assert escaped.count("\n\n") == text.count("\n\n")
    assert reads_by_kind(text)["<"] > 100 * reads_by_kind(escaped).get("<", 1)
    small = "\n\n".join(f"Paragraph {i}: when a<b the archive keeps both. " + PROSE for i in range(60))
    assert _text(escaped_beyond(small, FAR)) == _text(small)


def test_escaping_every_opener_loses_no_word(corpus_dir: Path) -> None:
    """When even the near openers are too many, every one is escaped: links and code spans become
    their source text, so every word of the former elements is still there (and the targets)."""
    for path in sorted((corpus_dir / "docs").rglob("*.md")):
        text = normalize_markdown(path.read_text(encoding="utf-8"))
        former, now = _element_words(text), _element_words(escaped_beyond(text, 0))
        assert not former - now, path.name
        assert "https" in now - former


def test_hostile_markdown_is_indexed_with_its_text_well_within_the_parse_limit() -> None:
    """Each shape at 200,000 characters, through the parser processes a sync uses, under the
    parse limit a sync uses (limits.max_seconds, 120 s of CPU): unescaped, the cheapest of them
    would take tens of minutes (8,000 "[" took 8.5 s and the cost grows with the square). Every
    letter comes back (near the end, where openers are near and left alone, python-markdown's
    code spans may join words). The footnote-like shape took 64-78 s of CPU in session 35 (the
    dialect scan's quadratic footnote pattern, fixed in session 36: about 1 s now)."""
    bench = _bench()
    shapes = list(bench.HOSTILE_SHAPES)
    jobs = [Job(shape, bench.hostile_text(shape, 200_000).encode("utf-8"), f"{i}.md") for i, shape in enumerate(shapes)]
    with ParsePool(ParseLimits(ocr=False), size=1) as pool:
        outcomes = {job.tag: outcome for job, outcome in pool.parse_all(jobs, total=len(jobs))}
    for job in jobs:
        outcome = outcomes[job.tag]
        assert not isinstance(outcome, ParseError), (job.tag, outcome)
        text = " ".join(element["text"] for element in outcome["elements"])
        assert _letters(text) == _letters(job.data.decode("utf-8")), job.tag


def test_the_read_count_is_never_far_below_python_markdowns_reads() -> None:
    """The escaping decision rests on the count: on 1,500 seeded random texts of openers,
    closers, escapes and block markers, python-markdown's own scans (counted around its link
    text, link destination and code span scans) never read more than 21 times the count (three
    link processors scan each "[", and escapes become 14-character placeholders)."""
    read = [0]
    get_text, get_link, code_spans = (inline.LinkInlineProcessor.getText, inline.LinkInlineProcessor.getLink,
                                      inline.BacktickInlineProcessor.find_code_spans)

    def counted_text(self, data, index):
        result = get_text(self, data, index)
        read[0] += result[1] - index
        return result

    def counted_link(self, data, index):
        result = get_link(self, data, index)
        read[0] += max(0, result[2] - index) if result[3] else len(data) - index
        return result

    def counted_spans(self, start, text):
        result = code_spans(self, start, text)
        read[0] += (result[1] if result[1] is not None else len(text)) - start
        return result

    atoms = ["[", "]", "(", ")", "`", "``", "a", " ", "\n", "\n\n", "![", "\\", "<a", ">", "- ", "> ", "    ", "*"]
    rng = random.Random(21)
    try:
        inline.LinkInlineProcessor.getText = counted_text
        inline.LinkInlineProcessor.getLink = counted_link
        inline.BacktickInlineProcessor.find_code_spans = counted_spans
        for _ in range(1_500):
            text = "".join(rng.choice(atoms) for _ in range(rng.randint(5, 300)))
            read[0] = 0
            markdown.markdown(text, extensions=["tables", "fenced_code"])
            count = sum(cost for kind, cost in reads_by_kind(text).items() if kind != "<")
            assert read[0] <= 21 * count + 100, text
    finally:
        inline.LinkInlineProcessor.getText = get_text
        inline.LinkInlineProcessor.getLink = get_link
        inline.BacktickInlineProcessor.find_code_spans = code_spans


def test_a_megabyte_of_unclosed_footnote_references_parses_in_its_limit() -> None:
    """The dialect scan's footnote pattern read a label up to the next "]" over any "[", so
    "[^" never closed scanned the rest of the line from each one (64-78 s of CPU at 200,000
    characters, hours at a megabyte); a label now stops at "[". 1 MB within the sync's parse
    limit (120 s of CPU, about 2 s here), every letter kept; a real footnote still reads."""
    text = "Notes[^" * 150_000
    job = Job("refs", text.encode("utf-8"), "refs.md")
    with ParsePool(ParseLimits(ocr=False), size=1) as pool:
        ((_, outcome),) = list(pool.parse_all([job], total=1))
    assert not isinstance(outcome, ParseError), outcome
    assert _letters(" ".join(element["text"] for element in outcome["elements"])) == _letters(text)
    read = [e.text for e in parse_document(b"Fees apply.[^1]\n\n[^1]: Since 2024.\n", "fees.md").elements]
    assert "Fees apply." in read and "Since 2024." in read and not any("[^" in t for t in read)
