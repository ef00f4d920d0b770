"""Plain text without the heavy stack (issue 28, item 4).

Plain text went through unstructured's `partition_text`: importing it loaded spaCy, and every
paragraph that was not obviously long ran spaCy's tagger and parser (sentence split, POS tags),
only to tell NarrativeText from Text -- both become "paragraph" here -- or to guess whether a
short line is a heading. A 0.6 MB file of 5,000 paragraphs took 5 s, nearly all of it spaCy.

This module gives the same elements with that work done only where it decides something:
- the text is grouped into paragraphs by unstructured's own grouper (`auto_paragraph_grouper`
  and the same split; unstructured.cleaners, which loads neither spaCy nor a partitioner);
- each paragraph is typed by `element_from_text`'s rules in its order: a bullet or a numbered
  line is a list item, an e-mail address or a US city/state/ZIP line is a paragraph;
- a paragraph that can never be a heading is a paragraph at once: more than 12 words, mostly
  not letters, an upper-case line ending in punctuation, a number, a line ending in "," -- the
  cheap tests of unstructured's `is_possible_title` -- or a line ending as a sentence ends,
  which the project never keeps as a guessed heading (`_demoted`);
- only what is left (short lines such as "Quarterly Results" or "Revenue grew strongly") is
  decided by unstructured's heuristics on spaCy's reading -- the same model object, the same
  sentence and verb rules (`_reads_as_heading`) -- run over all those lines of the file at once
  (`nlp.pipe`, 5x faster than one call per line) and loaded on first need: a line that is not
  narrative and reads as one title is a heading.

The result is checked equal to the former path on generated and hostile files
(rag_pipeline_tests/parsing/test_text_direct.py). unstructured's thresholds are its defaults;
its UNSTRUCTURED_* environment overrides are not read by the cheap tests.
"""

from __future__ import annotations

import re
from typing import Any

from unstructured.cleaners.core import auto_paragraph_grouper, clean_bullets, remove_punctuation
from unstructured.nlp.patterns import (
    EMAIL_ADDRESS_PATTERN_RE,
    ENDS_IN_PUNCT_RE,
    NUMBERED_LIST_RE,
    PARAGRAPH_PATTERN,
    UNICODE_BULLETS_RE,
    US_CITY_STATE_ZIP_RE,
)

from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.paginated_text import read_text
from rag_pipeline.parsing.types import Element, ParsedDocument

_TITLE_MAX_WORDS = 12  # unstructured's is_possible_title default
_NARRATIVE_MIN_CHARS = 400  # office/fast_heuristics: longer blocks are narrative, never asked of spaCy
_VERB_TAGS = {"VB", "VBG", "VBD", "VBN", "VBP", "VBZ"}  # unstructured's POS_VERB_TAGS
_SENTENCE_END = re.compile(r"[.!;,]\s*$")
_NUMBER_END = re.compile(r"(?:^|\s)(?:\d+(?:\.\d+)*|[IVXLCivxlc]+)\.\s*$")


def parse_text_file(data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
    """A plain-text file: strict decoding (office/text.decode_text_strict), then its elements."""
    from rag_pipeline.parsing.office.text import decode_text_strict
    from rag_pipeline.parsing.office.version import PARSER_VERSION

    text = decode_text_strict(data, "text")
    paginated = read_text(text)
    return ParsedDocument(elements=guessed_text_elements(text) if paginated is None else paginated, parser=PARSER_VERSION)


def guessed_text_elements(text: str, heading_offset: int = 0) -> list[Element]:
    """Paragraphs, list items and guessed headings of plain `text` (a file, or an e-mail's text
    part, whose headings sit `heading_offset` levels down). A guessed heading is level 1: in
    notes and READMEs such short lines nearly always are top-level."""
    if not text.strip():
        return []
    blocks = [block.strip() for block in re.split(PARAGRAPH_PATTERN, auto_paragraph_grouper(text).strip())]
    blocks = [b for b in blocks if b and not (len(b) == 1 and UNICODE_BULLETS_RE.match(b))]  # no empty bullets
    typed = [_typed_without_model(block) for block in blocks]
    headings = _headings_among([b for b, element in zip(blocks, typed) if element is None])
    level = max(1, min(6, 1 + heading_offset))
    elements = [element or (Element(kind="heading", text=block, level=level) if block in headings
                            else Element(kind="paragraph", text=block))
                for block, element in zip(blocks, typed)]
    return [element for element in elements if element.text]


def _typed_without_model(text: str) -> Element | None:
    """`text` (one stripped paragraph) typed as unstructured.partition.text.element_from_text
    types it and mapped as office/elements.py maps those types, where no language model is
    needed; None for a line that may be a heading."""
    if UNICODE_BULLETS_RE.match(text):
        return Element(kind="list_item", text=clean_bullets(text).strip())
    if EMAIL_ADDRESS_PATTERN_RE.fullmatch(text) or US_CITY_STATE_ZIP_RE.match(text):
        return Element(kind="paragraph", text=text)
    if NUMBERED_LIST_RE.match(text):
        return Element(kind="list_item", text=text)
    if _never_heading(text):
        return Element(kind="paragraph", text=text)
    return None


def _never_heading(text: str) -> bool:
    """The tests that rule a heading out without a language model (see the module docstring)."""
    return (
        len(text) > _NARRATIVE_MIN_CHARS
        or len(text.split(" ")) > _TITLE_MAX_WORDS
        or (text.isupper() and ENDS_IN_PUNCT_RE.search(text) is not None)
        or _mostly_not_letters(text)
        or text.endswith(",")
        or text.isnumeric()
        or _demoted(text)
    )


def _demoted(text: str) -> bool:
    """A guessed heading that ends as a sentence ends ("Please approve by Friday.") is a
    paragraph: as a heading it split the text around it and became the section path of
    everything below it. A numbered line ("Chapter 3.", "IV.") may still be a heading."""
    return bool(_SENTENCE_END.search(text)) and not _NUMBER_END.search(text)


def _mostly_not_letters(text: str) -> bool:
    """unstructured's under_non_alpha_ratio at its 0.5 default: fewer than half of the
    non-space characters are letters ("-----BREAK-----", "2024-01-31")."""
    counted = [char for char in text if not char.isspace()]
    return bool(counted) and sum(char.isalpha() for char in counted) / len(counted) < 0.5


def _headings_among(lines: list[str]) -> set[str]:
    """The lines spaCy's reading makes headings, all read in one batch."""
    if not lines:
        return set()
    from unstructured.nlp.tokenize import _get_nlp  # the model (and its components) unstructured loads

    unique = list(dict.fromkeys(lines))
    return {line for line, doc in zip(unique, _get_nlp().pipe(unique, batch_size=256)) if _reads_as_heading(line, doc)}


def _reads_as_heading(text: str, doc: Any) -> bool:
    """unstructured.partition.text_type at its defaults, on one spaCy Doc of `text`: not
    `is_possible_narrative_text` and `is_possible_title` (whose cheap tests `_never_heading`
    has passed). Narrative is one sentence of 3+ words with a verb, or two such sentences, unless
    mostly capitalised (a one-sentence line whose alphabetic tokens are over half capitalised,
    or all upper case); a title is one sentence of 5+ words at most."""
    one_sentence = _sentences(doc, 3) < 2
    capitalised = one_sentence and (text.isupper() or _capitalised_share(doc) > 0.5)
    has_verb = any(token.tag_ in _VERB_TAGS for token in doc)
    narrative = not capitalised and (has_verb or not one_sentence)
    return not narrative and _sentences(doc, 5) <= 1


def _sentences(doc: Any, min_words: int) -> int:
    """unstructured's sentence_count: spaCy's sentences of at least `min_words` words once
    punctuation is removed."""
    return sum(sum(1 for word in remove_punctuation(sent.text).split() if word != ".") >= min_words for sent in doc.sents)


def _capitalised_share(doc: Any) -> float:
    """The share of alphabetic tokens that are title-case or upper-case (1.0 when there are none,
    as unstructured's exceeds_cap_ratio counts that as capitalised)."""
    words = [token.text for token in doc if token.text.isalpha()]
    return sum(w.istitle() or w.isupper() for w in words) / len(words) if words else 1.0
