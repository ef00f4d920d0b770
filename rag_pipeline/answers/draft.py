"""A generated answer as `verify` takes it (DESIGN.md, "Answers"): the search it came from and
its claims, each with the chunk ids it cites and optionally the quoted span; or plain answer text
with inline markers (`[chunk 51]`, `[chunks 51, 52]`), split into claims by sentence.

The input comes from a generator, that is, from text an LLM wrote: it is parsed strictly and
bounded before anything else happens, so a malformed or oversized answer is refused with the
reason and nothing is recorded. Unknown fields are refused rather than ignored: a caller who
misspells `quote` as `qoute` must learn that its quote was never checked.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

from rag_pipeline.answers.claim_sentences import claim_spans
from rag_pipeline.errors import UsageError

MAX_ANSWER_BYTES = 1024 * 1024  # a long answer is a few KB; far above any, far below a memory problem
MAX_CLAIMS = 500
MAX_CITATIONS = 20  # per claim
MAX_CLAIM_CHARS = 4000
MAX_QUOTE_CHARS = 2000
MAX_ID = 2**63 - 1  # bigserial
_ANSWER_KEYS = {"log_id", "claims", "text"}
_CLAIM_KEYS = {"text", "citations"}
_CITATION_KEYS = {"chunk_id", "quote"}
# "[chunk 51]", "[chunks 51, 52]", and the spellings generators also write: "[chunk: 51]",
# "[chunk #51]", "[chunk_id 51]", "[Chunk ID: 51]", "[chunks: #51 and #52]"
_MARKER = re.compile(r"\[\s*chunks?(?:[ _]?ids?)?(?:\s*:\s*|\s+)([^\]]{0,400})\]", re.IGNORECASE)


class AnswerError(UsageError):
    """The answer cannot be verified as given; the message says what to fix. Nothing is recorded."""


@dataclass(frozen=True)
class Citation:
    chunk_id: int
    quote: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"chunk_id": self.chunk_id, **({"quote": self.quote} if self.quote is not None else {})}


@dataclass(frozen=True)
class Claim:
    text: str
    citations: tuple[Citation, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "citations": [c.to_dict() for c in self.citations]}


@dataclass(frozen=True)
class Draft:
    log_id: int
    claims: tuple[Claim, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"log_id": self.log_id, "claims": [c.to_dict() for c in self.claims]}


def read_answer(raw: bytes, log_id: int | None = None) -> Draft:
    """An answer file's bytes: a JSON object in the format above, or plain text with markers
    (then `log_id` names the search). A `log_id` given here must agree with the file's."""
    if len(raw) > MAX_ANSWER_BYTES:
        raise AnswerError(f"the answer is over {MAX_ANSWER_BYTES:,} bytes; the limit is {MAX_ANSWER_BYTES:,} "
                          f"(split a longer answer into several)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AnswerError(f"the answer is not UTF-8 text (byte {exc.start})") from exc
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text, object_pairs_hook=_no_duplicates)
        except (ValueError, RecursionError) as exc:
            raise AnswerError(f"the answer is not valid JSON: {str(exc)[:200]}") from exc
        return parse_answer(data, log_id)
    if log_id is None:
        raise AnswerError("a plain-text answer does not name its search: give the search's log id (--log-id)")
    return parse_answer({"log_id": log_id, "text": text})


def parse_answer(data: Any, log_id: int | None = None) -> Draft:
    """A parsed answer (the JSON object) as a Draft, or AnswerError naming what is wrong."""
    if not isinstance(data, dict):
        raise AnswerError("the answer must be a JSON object with 'log_id' and 'claims' (or 'text')")
    unknown = sorted(set(data) - _ANSWER_KEYS)
    if unknown:
        raise AnswerError(f"unknown field(s) {_names(unknown)} in the answer; it has {_names(sorted(_ANSWER_KEYS))}")
    found = _whole(data.get("log_id"), "log_id")
    if log_id is not None and log_id != found:
        raise AnswerError(f"the answer names search {found} but search {log_id} was given")
    if ("claims" in data) == ("text" in data):
        raise AnswerError("give either 'claims' (a list) or 'text' (answer text with [chunk N] markers), not both")
    if "text" in data:
        if not isinstance(data["text"], str):
            raise AnswerError("'text' must be a string")
        claims = split_text(data["text"])
    else:
        if not isinstance(data["claims"], list):
            raise AnswerError("'claims' must be a list")
        if len(data["claims"]) > MAX_CLAIMS:
            raise AnswerError(f"the answer has {len(data['claims']):,} claims; the limit is {MAX_CLAIMS}")
        claims = [_claim(item, n) for n, item in enumerate(data["claims"], 1)]
    if not claims:
        raise AnswerError("the answer has no claims: there is nothing to verify")
    if len(claims) > MAX_CLAIMS:
        raise AnswerError(f"the answer has {len(claims):,} claims; the limit is {MAX_CLAIMS}")
    return Draft(log_id=found, claims=tuple(claims))


def _claim(item: Any, number: int) -> Claim:
    where = f"claim {number}"
    if not isinstance(item, dict):
        raise AnswerError(f"{where} must be an object with 'text' and 'citations'")
    unknown = sorted(set(item) - _CLAIM_KEYS)
    if unknown:
        raise AnswerError(f"unknown field(s) {_names(unknown)} in {where}; a claim has {_names(sorted(_CLAIM_KEYS))}")
    text = _text(item.get("text"), f"{where}: 'text'", MAX_CLAIM_CHARS)
    citations = item.get("citations", [])
    if not isinstance(citations, list):
        raise AnswerError(f"{where}: 'citations' must be a list")
    if len(citations) > MAX_CITATIONS:
        raise AnswerError(f"{where} has {len(citations)} citations; the limit is {MAX_CITATIONS}")
    return Claim(text=text, citations=tuple(_citation(c, f"{where}, citation {i}") for i, c in enumerate(citations, 1)))


def _citation(item: Any, where: str) -> Citation:
    if not isinstance(item, dict):
        raise AnswerError(f"{where} must be an object with 'chunk_id' (and optionally 'quote')")
    unknown = sorted(set(item) - _CITATION_KEYS)
    if unknown:
        raise AnswerError(f"unknown field(s) {_names(unknown)} in {where}; a citation has {_names(sorted(_CITATION_KEYS))}")
    quote = item.get("quote")
    if quote is not None:
        quote = _text(quote, f"{where}: 'quote'", MAX_QUOTE_CHARS)
    return Citation(chunk_id=_whole(item.get("chunk_id"), f"{where}: 'chunk_id'"), quote=quote)


def _whole(value: Any, what: str) -> int:
    """A positive whole number as JSON writes one: not a string, a float or a boolean."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_ID:
        raise AnswerError(f"{what} must be a positive whole number (at most {MAX_ID}), got {_shown(value)}")
    return value


def _text(value: Any, what: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise AnswerError(f"{what} must be a non-empty string, got {_shown(value)}")
    if len(value) > limit:
        raise AnswerError(f"{what} is {len(value):,} characters long; the limit is {limit:,}")
    if "\x00" in value:
        raise AnswerError(f"{what} contains a NUL character")
    return value


def split_text(text: str) -> list[Claim]:
    """Claims of answer text with inline markers: one per sentence, list item or paragraph
    (claim_sentences.py), citing the markers inside it or right after its full stop
    (`... a night. [chunk 52]` cites for that sentence)."""
    if "\x00" in text:
        raise AnswerError("the answer text contains a NUL character")
    markers = []
    for match in _MARKER.finditer(text):
        ids = [part.strip().lstrip("#") for part in re.split(r"[,;\s]+(?:and\s+)?", match.group(1)) if part.strip()]
        if not ids:
            raise AnswerError(f"marker {match.group()!r} names no chunk id")
        markers.append((match.start(), [_marker_id(i, match.group()) for i in ids]))
    plain = _MARKER.sub(lambda m: " " * len(m.group()), text)  # offsets stay those of the text
    spans = claim_spans(plain, [position for position, _ in markers])
    if len(spans) > MAX_CLAIMS:
        raise AnswerError(f"the answer text has {len(spans):,} sentences; the limit is {MAX_CLAIMS}")
    cited: list[list[Citation]] = [[] for _ in spans]
    starts = [span.start for span in spans]
    for position, ids in markers:
        if spans:  # the last claim (or list of sources) that starts before the marker, or the first
            cited[max(bisect_left(starts, position) - 1, 0)].extend(Citation(i) for i in ids)
    claims = []
    for (_, _, is_claim, body), citations in zip(spans, cited):
        if not is_claim:  # a list of sources: its markers cite no claim
            continue
        if len(body) > MAX_CLAIM_CHARS:
            raise AnswerError(f"a sentence of the answer is {len(body):,} characters long; the limit is {MAX_CLAIM_CHARS:,}")
        if len(citations) > MAX_CITATIONS:
            raise AnswerError(f"a sentence of the answer has {len(citations)} citations; the limit is {MAX_CITATIONS}")
        claims.append(Claim(body, tuple(dict.fromkeys(citations))))
    return claims


def _marker_id(text: str, marker: str) -> int:
    if not text.isascii() or not text.isdigit() or not 0 < int(text) <= MAX_ID:
        raise AnswerError(f"marker {marker[:60]!r}: {text[:40]!r} is not a chunk id (a positive whole number)")
    return int(text)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"duplicate key {next(k for k in keys if keys.count(k) > 1)!r}")
    return dict(pairs)


def _names(keys: list[str]) -> str:
    return ", ".join(repr(k[:40]) for k in keys[:10])


def _shown(value: Any) -> str:
    return repr(value)[:60]
