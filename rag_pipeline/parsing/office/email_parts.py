"""The readable parts of an e-mail, in reading order.

unstructured's e-mail partitioner reads one body: `EmailMessage.get_body()`, the best text part
found first. Everything else was silently left out of the index: a second inline text part of a
multipart/mixed message (text written around an attachment, a mail assembled by a list server)
and every enclosed message (message/rfc822: a mail forwarded "as attachment", a returned
message, a digest). This walk keeps get_body's choices where it makes one (in
multipart/alternative the HTML version over the plain one, in multipart/related its root part,
never a part marked as an attachment) and reads every other part in order:
- inline text/plain and text/html parts, each once;
- enclosed messages, each under a heading of its own subject, one level below the mail's, with
  the same rules inside.
File attachments (a part whose Content-Disposition is "attachment") stay out: they must be
ingested as files of their own, with the type checks and limits every file gets.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from email.message import EmailMessage, Message

_READABLE = ("text/html", "text/plain")  # get_body's preference, as unstructured's partitioner asks for it
MAX_SUBJECT_CHARS = 4_000


@dataclass(frozen=True)
class Part:
    """One readable part: `kind` is "text/html", "text/plain" or "message" (the start of an
    enclosed message, `text` its subject); `depth` counts the messages it is enclosed in."""

    kind: str
    text: str
    depth: int


def readable_parts(message: EmailMessage) -> list[Part]:
    """The parts to index, in order; the top-level message's own body first."""
    return list(_walk(message, 0, root=True))


def _walk(part: Message, depth: int, *, root: bool = False) -> Iterator[Part]:
    ctype = part.get_content_type()
    if ctype == "message/rfc822":  # before is_multipart(): its payload is the enclosed message
        for enclosed in part.get_payload() or []:
            if isinstance(enclosed, Message):
                yield Part("message", subject_of(enclosed), depth + 1)
                yield from _walk(enclosed, depth + 1, root=True)
        return
    if not root and part.get_content_disposition() == "attachment":
        return
    if part.is_multipart():
        yield from _walk_multipart(part, ctype, depth)
    elif ctype in _READABLE:
        yield Part(ctype, _content(part), depth)


def _walk_multipart(part: Message, ctype: str, depth: int) -> Iterator[Part]:
    children = [child for child in part.get_payload() if isinstance(child, Message)]
    if ctype == "multipart/alternative":
        chosen = _preferred(children)
        if chosen is not None:
            yield from _walk(chosen, depth)
    elif ctype == "multipart/related":
        root = _related_root(part, children)
        if root is not None:
            yield from _walk(root, depth)
    else:
        for child in children:
            yield from _walk(child, depth)


def _preferred(children: list[Message]) -> Message | None:
    """The alternative get_body would read: the first HTML version, else the first plain one
    (looking through a multipart/related or mixed alternative at what it holds)."""
    for wanted in _READABLE:
        for child in children:
            if child.get_content_disposition() != "attachment" and wanted in _holds(child):
                return child
    return None


def _holds(part: Message) -> set[str]:
    """The readable types a part is or holds (enclosed messages not counted)."""
    ctype = part.get_content_type()
    if ctype in _READABLE:
        return {ctype}
    if part.is_multipart() and ctype != "message/rfc822":
        return {kind for child in part.get_payload() if isinstance(child, Message) for kind in _holds(child)}
    return set()


def _related_root(part: Message, children: list[Message]) -> Message | None:
    """multipart/related's root: the part its `start` parameter names, else the first."""
    start = part.get_param("start")
    if start:
        for child in children:
            if child.get("content-id") == start:
                return child
    return children[0] if children else None


def _content(part: Message) -> str:
    """A text part's text: strictly decoded by its declared charset, else as UTF-8, else as
    Windows-1252. Mail often says one charset and sends another (Latin text declared UTF-8 or
    ASCII by an old client, or a charset name no codec knows); decoding by the label with
    replacement characters turned "Müller" into "M\ufffdller" in the index, which no search finds.
    Windows-1252 is what such mislabelled mail nearly always is, and it decodes any byte."""
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    for encoding in (part.get_content_charset() or "us-ascii", "utf-8"):
        try:
            return payload.decode(encoding)
        except (LookupError, UnicodeDecodeError):
            continue
    return payload.decode("cp1252", "replace")


def subject_of(message: Message) -> str:
    """The Subject header, decoded (RFC 2047 encoded words), whitespace collapsed. Only its first
    MAX_SUBJECT_CHARS raw characters are decoded: both of the standard library's decoders take
    time growing faster than the header (20,000 encoded words, 400 KB: 2.7 s), and no real
    subject comes near that length."""
    from email.errors import HeaderParseError
    from email.header import decode_header, make_header

    from rag_pipeline.parsing.office.text import normalize_whitespace

    raw = next((value for name, value in message.raw_items() if name.lower() == "subject"), None)
    if not raw:
        return ""
    raw = str(raw)[:MAX_SUBJECT_CHARS]
    try:
        decoded = str(make_header(decode_header(raw)))
    except (HeaderParseError, LookupError, UnicodeError, ValueError):
        decoded = raw
    return normalize_whitespace(decoded)
