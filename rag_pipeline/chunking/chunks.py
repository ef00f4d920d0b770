"""Structure-aware chunking: sections from headings, each chunk carrying its section path, page
span, character offsets into the cleaned text and its token count under the model's own
tokenizer. A chunk never exceeds the model's maximum input; tables split only between rows.

The text a chunk is embedded with is its document's identity line (title, and the issuer and
period a filing states: see document_identity.py), its section path, then its text: headings and
the document carry much of the meaning ("2 Approval", "Form 10-Q, quarter ended March 31") that
the body text never repeats. Both count against the model's input budget, each held to its share
(model_prefix.py); the body is never cut to make room for them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from rag_pipeline.chunking import merge
from rag_pipeline.chunking.keep_with_next import keeps_with_next
from rag_pipeline.chunking.model_prefix import (  # noqa: F401 (MAX_IDENTITY_TOKENS: part of this module's API)
    ELLIPSIS,
    MAX_IDENTITY_TOKENS,
    PathFitter,
    TokenCounter,
    fit_identity,
    section_prefix,
)
from rag_pipeline.chunking.packing import MAX_CHUNK_CHARS, Piece, pack, row_boundaries, split_at, word_windows
from rag_pipeline.chunking.paragraph_headings import promote_paragraph_headings
from rag_pipeline.parsing.types import Element

CHUNKER_VERSION = "sections8"  # sections8: a table's caption or a lead-in ending in ":", and a split table's header row and rule, start the chunk of what they introduce where they would have ended the chunk before (keep_with_next.py, packing.py); text after "。！？" splits as after ". ", and a run without spaces is cut by characters to the budget (packing.character_windows); sections7: the model input says each heading in at most 48 tokens and the path in 96 (model_prefix.py), a heading cut there read as its section's first text; sections6: a heading with no body carried by the paths under it instead of a chunk of its own; sections5: short sibling sections merged into one chunk (merge.py); sections4: document identity line, headings from paragraph form; sections3: per-language full-text configuration; sections2: repeated empty headings keep their own offsets
ELEMENT_SEPARATOR = "\n\n"
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|(?<=[\u3002\uff01\uff1f\uff1b\uff61])\s*|\n+")  # and CJK full stops


@dataclass
class Chunk:
    ord: int
    text: str
    section_path: list[str]
    page_start: int | None
    page_end: int | None
    char_start: int
    char_end: int
    token_count: int
    content_hash: str
    search_text: str  # what is embedded and full-text indexed: search_prefix + text
    search_prefix: str = ""  # identity line and section path as embedded (stored for audits)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Chunk:
        """Back from `to_dict()`; pages may be absent (None), as stage always allowed. A key this
        version does not know is an error, not silently dropped."""
        unknown = set(data) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"unknown chunk fields {sorted(unknown)}")
        return cls(**{"page_start": None, "page_end": None, **data})


def cleaned_text(elements: Sequence[Element]) -> tuple[str, list[tuple[int, int]]]:
    """The document's cleaned text (elements joined by blank lines) and each element's span."""
    spans, parts, pos = [], [], 0
    for i, element in enumerate(elements):
        if i:
            parts.append(ELEMENT_SEPARATOR)
            pos += len(ELEMENT_SEPARATOR)
        parts.append(element.text)
        spans.append((pos, pos + len(element.text)))
        pos += len(element.text)
    return "".join(parts), spans


def chunk_elements(
    elements: Sequence[Element],
    count_tokens: TokenCounter,
    max_tokens: int,
    target_tokens: int | None = None,
    identity: str = "",
) -> list[Chunk]:
    """Group elements into chunks per section, filling up to `target_tokens` (default: the
    model maximum) and splitting oversized elements at sentence, row or word boundaries.
    `identity` (see document_identity.py) is put before every chunk's section path."""
    target = min(target_tokens or max_tokens, max_tokens)
    identity = fit_identity(identity, count_tokens)
    text, spans = cleaned_text(elements)
    promoted = promote_paragraph_headings(elements)
    fitter = PathFitter(count_tokens)
    sections = _sections(promoted)
    fitter.learn([s.path for s in sections])
    _read_long_headings(sections, fitter)
    planned = [_plan(section, elements, spans, text, identity, fitter, target) for section in sections]
    kept = _carried_headings_dropped(sections, [shown for shown, _ in planned], promoted)
    sections, planned = [sections[i] for i in kept], [planned[i] for i in kept]

    def fits(run: Sequence[merge.Section]) -> bool:
        start, end = spans[merge.run_start(run)][0], spans[run[-1].members[-1]][1]
        prefix = section_prefix(fitter.path(run[0].path[: merge.common_heads(run)]), identity)
        return end - start <= MAX_CHUNK_CHARS and count_tokens([prefix + text[start:end]])[0] <= target

    chunks: list[Chunk] = []
    for run in merge.merge_runs(sections, [len(groups) == 1 for _, groups in planned], fits):
        if len(run) == 1:
            shown, groups = planned[run[0]]
            section = sections[run[0]]
            for k, group in enumerate(groups):
                said = _without_own_heading(shown) if k == 0 and _reads_own_heading(section) else shown
                chunks.append(_make_chunk(len(chunks), group, text, (section.path, said), identity,
                                          count_tokens, max_tokens))
            continue
        members = [sections[i] for i in run]
        first = merge.run_start(members)
        heading = Piece(*spans[first], elements[first].page, elements[first].page_end or elements[first].page)
        group = [heading] + [p for i in run for p in planned[i][1][0]]
        path = members[0].path[: merge.common_heads(members)]
        chunks.append(_make_chunk(len(chunks), group, text, (path, fitter.path(path)), identity,
                                  count_tokens, max_tokens))
    return chunks


def _plan(section: merge.Section, elements: Sequence[Element], spans: list[tuple[int, int]], text: str,
          identity: str, fitter: PathFitter, target: int) -> tuple[list[str], list[list[Piece]]]:
    """One section's path as its model input says it (model_prefix.PathFitter; none where even
    that leaves the body under 16 tokens, as a model of a smaller input can) and its chunks'
    pieces, as it is chunked on its own."""
    count = fitter.count
    shown = fitter.path(section.path)
    prefix = section_prefix(shown, identity)
    budget = target - count([prefix])[0] if prefix else target
    if budget < 16:
        shown = []
        prefix = section_prefix(shown, identity)
        budget = max(16, target - count([prefix])[0])
    pieces: list[Piece] = []
    glued: set[int] = set()  # pieces that go on to the next one's chunk where the run fits (packing.py)
    for i, after in zip(section.members, [*section.members[1:], None]):
        own = _pieces(elements[i], spans[i], text, count, budget)
        if elements[i].kind == "table":  # a split table's header row and rule stay with its first row
            glued.update(range(len(pieces), len(pieces) + min(2, len(own) - 1)))
        pieces += own
        if after is not None and keeps_with_next(elements[i], elements[after]):
            glued.add(len(pieces) - 1)
    return shown, pack(pieces, text, count, budget, glued)


def _carried_headings_dropped(sections: Sequence[merge.Section], shown: Sequence[list[str]],
                              elements: Sequence[Element]) -> list[int]:
    """The sections that are chunked: all but a heading with no body whose next chunked section
    is under it and says it in its path ("# Report" directly followed by "## 1 Scope"). Its text
    is in every chunk of that section already (the path is embedded and full-text indexed), so
    a chunk of the heading alone repeats what they say and gives a reader nothing to cite. A
    heading that ends its document or its part, or that the path of the section below says only
    cut short or not at all (model_prefix: a long heading, or an outer one of a deep path), keeps
    its own chunk: nothing it says is lost. Read from the end, so a heading is never dropped for
    a section that is itself dropped. `shown`: each section's path as its model input says it."""
    kept: list[int] = []
    for i in reversed(range(len(sections))):
        section = sections[i]
        bodyless = not section.own_heading and len(section.members) == 1 and elements[section.members[0]].kind == "heading"
        if bodyless and kept and _keeps_heading(sections[kept[-1]], shown[kept[-1]], section.members[0]):
            continue
        kept.append(i)
    return kept[::-1]


def _reads_own_heading(section: merge.Section) -> bool:
    """Whether the section's text opens with its own heading (one too long for a path: _sections)."""
    return section.own_heading and section.members[0] == section.heads[-1]


def _without_own_heading(shown: list[str]) -> list[str]:
    """A path without its innermost heading, for the chunk whose text says that heading whole."""
    return [] if shown[:-1] == [ELLIPSIS] else shown[:-1]


def _keeps_heading(section: merge.Section, path: list[str], heading: int) -> bool:
    """Whether `section` lies under the heading element `heading` and its planned path still says it."""
    return heading in section.heads and section.path[section.heads.index(heading)] in path


def _sections(elements: Sequence[Element]) -> list[merge.Section]:
    """Each heading's body elements with the heading path above them; text before the first
    heading has an empty path. A heading with no body keeps its own text as content (under its
    parent's path), so it remains findable; chunk_elements then drops it where the sections
    under it say it in their paths (`_carried_headings_dropped`)."""
    stack: list[tuple[int, str, int]] = []  # (level, heading text, element index)
    sections: list[merge.Section] = []
    for i, element in enumerate(elements):
        if element.kind == "heading":
            level = element.level or 1
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, " ".join(element.text.split()), i))
            sections.append(merge.Section([h for _, h, _ in stack], [j for _, _, j in stack], [], True))
            continue
        if not sections:
            sections.append(merge.Section([], [], [], False))
        sections[-1].members.append(i)
    out = []
    for section in sections:
        if section.members:
            out.append(section)
        elif section.own_heading:
            out.append(merge.Section(section.path[:-1], section.heads[:-1], [section.heads[-1]], False))
    return out


def _read_long_headings(sections: Sequence[merge.Section], fitter: PathFitter) -> None:
    """A heading longer than a path may say whole (PathFitter.too_long) becomes its section's
    first text as well, so its words are in a chunk and not only, cut short, in the paths."""
    for section in sections:
        if section.own_heading and fitter.too_long(section.path[-1]):
            section.members.insert(0, section.heads[-1])


def _pieces(element: Element, span: tuple[int, int], text: str, count: TokenCounter, budget: int) -> list[Piece]:
    start, end = span
    first, last = element.page, element.page_end or element.page
    if end - start <= MAX_CHUNK_CHARS and count([text[start:end]])[0] <= budget:
        return [Piece(start, end, first, last)]
    if element.kind == "table":
        boundaries = row_boundaries(text, start, end)
    else:
        boundaries = [start + m.end() for m in _SENTENCE_END.finditer(text[start:end])]
    out: list[Piece] = []
    for s, e in split_at(start, end, boundaries):
        if e - s > MAX_CHUNK_CHARS or count([text[s:e]])[0] > budget:
            out.extend(Piece(a, b, first, last) for a, b in word_windows(text, s, e, count, budget))
        else:
            out.append(Piece(s, e, first, last))
    return out


def _make_chunk(
    ordinal: int, group: list[Piece], text: str, paths: tuple[list[str], list[str]], identity: str, count: TokenCounter,
    max_tokens: int,
) -> Chunk:
    """`paths`: the section path stored with the chunk and the one its model input says."""
    start, end = group[0].start, group[-1].end
    body = text[start:end]
    path, shown = paths
    # joins can add a token or two: give up the path, then the identity, never the body
    prefix, tokens = _fitted(body, (section_prefix(shown, identity), section_prefix([], identity), ""), count, max_tokens)
    pages = [p for piece in group for p in (piece.page_start, piece.page_end) if p is not None]
    return _chunk(ordinal, body, path, (min(pages), max(pages)) if pages else (None, None), start, prefix, tokens)


def _fitted(body: str, prefixes: Sequence[str], count: TokenCounter, max_tokens: int) -> tuple[str, int]:
    """The first of `prefixes` with which the body fits the model's input (else the last), and
    the tokens of prefix + body."""
    for prefix in prefixes:
        tokens = count([prefix + body])[0]
        if tokens <= max_tokens:
            break
    return prefix, tokens


def _chunk(ordinal: int, body: str, path: Sequence[str], pages: tuple[int | None, int | None], start: int,
           prefix: str, tokens: int) -> Chunk:
    search_text = prefix + body
    return Chunk(
        ord=ordinal,
        text=body,
        section_path=list(path),
        page_start=pages[0],
        page_end=pages[1],
        char_start=start,
        char_end=start + len(body),
        token_count=tokens,
        content_hash=hashlib.sha256(search_text.encode("utf-8")).hexdigest(),
        search_text=search_text,
        search_prefix=prefix,
    )


def split_chunk(chunk: Chunk, count: TokenCounter, max_tokens: int, first_ord: int = 0) -> list[Chunk]:
    """A stored chunk cut to fit a smaller input limit, numbered from `first_ord`: what a model
    migration to a model that reads fewer tokens does with the live chunks that no longer fit
    (migration/rechunk.py), from the chunk's own text, never from the document again. Its
    paragraphs (the blank lines between elements), then sentences or table rows, then words are
    packed as the chunker packs them; each piece keeps the chunk's section path and model-input
    prefix (dropped only where a piece cannot fit with it) and the chunk's page span, and its
    offsets into the document's cleaned text. A chunk that fits is returned as it is."""
    if count([chunk.search_text])[0] <= max_tokens:
        return [Chunk(**{**chunk.to_dict(), "ord": first_ord})]
    text = chunk.text
    budget = max_tokens - count([chunk.search_prefix])[0] if chunk.search_prefix else max_tokens
    if budget < 16:  # a path too long for the limit: the pieces go without it (as _make_chunk would)
        budget = max_tokens
    pages = (chunk.page_start, chunk.page_end)
    pieces: list[Piece] = []
    for s, e in _paragraphs(text):
        if e - s <= MAX_CHUNK_CHARS and count([text[s:e]])[0] <= budget:
            pieces.append(Piece(s, e, *pages))
            continue
        for a, b in split_at(s, e, [s + m.end() for m in _SENTENCE_END.finditer(text[s:e])]):
            if b - a > MAX_CHUNK_CHARS or count([text[a:b]])[0] > budget:
                pieces.extend(Piece(x, y, *pages) for x, y in word_windows(text, a, b, count, budget))
            else:
                pieces.append(Piece(a, b, *pages))
    out = []
    for group in pack(pieces, text, count, budget):
        body = text[group[0].start : group[-1].end].rstrip()
        prefix, tokens = _fitted(body, (chunk.search_prefix, ""), count, max_tokens)
        out.append(_chunk(first_ord + len(out), body, chunk.section_path, pages, chunk.char_start + group[0].start,
                          prefix, tokens))
    return out


def _paragraphs(text: str) -> list[tuple[int, int]]:
    """Spans of the text between blank lines (where the chunker joined its elements)."""
    spans, pos = [], 0
    for m in re.finditer(r"\n\s*\n", text):
        spans.append((pos, m.start()))
        pos = m.end()
    spans.append((pos, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]
