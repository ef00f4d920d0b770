"""Every readable part of an e-mail is indexed: a mail with one body parses as unstructured's
partitioner read it, and what that partitioner left out (a second inline text part, a
forwarded or enclosed message) is now there; file attachments still are not
(rag_pipeline/parsing/office/email_parts.py)."""

from __future__ import annotations

from email.message import EmailMessage
from email.policy import SMTP

import pytest

from rag_pipeline.parsing import ParseError, parse_document
from rag_pipeline.parsing.office.elements import map_markup_elements
from rag_pipeline.parsing.office.text import normalize_whitespace
from rag_pipeline.parsing.types import Element
from rag_pipeline_tests.parsing.test_office_parsing import _EML

BODY = "Revenue grew by twelve percent compared with the last quarter, mostly from the new product line."
HTML = f"<html><body><h2>Summary</h2><p>{BODY}</p><ul><li>EMEA up</li><li>APAC flat</li></ul></body></html>"


def _mail(subject: str = "Quarterly report") -> EmailMessage:
    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = "Alice <alice@example.com>", "bob@example.com", subject
    return mail


def _bytes(mail: EmailMessage) -> bytes:
    return mail.as_bytes(policy=SMTP)


def _single_bodies() -> dict[str, bytes]:
    plain = _mail()
    plain.set_content(f"Hi Bob,\n\n{BODY}\n\nRegards,\nAlice\n")
    html = _mail()
    html.set_content(HTML, subtype="html")
    alternative = _mail()
    alternative.set_content(f"{BODY}\n")
    alternative.add_alternative(HTML, subtype="html")
    related = _mail()
    related.set_content(f"{BODY}\n")
    related.add_alternative(HTML.replace("</body>", '<img src="cid:logo"></body>'), subtype="html")
    related.get_payload()[1].add_related(b"\x89PNG\r\n\x1a\n", maintype="image", subtype="png", cid="<logo>")
    attached = _mail()
    attached.set_content(f"{BODY}\n")
    attached.add_attachment(b"%PDF-1.4 not parsed", maintype="application", subtype="pdf", filename="report.pdf")
    attached.add_attachment("ATTACHED_TEXT_NOT_INDEXED", filename="notes.txt")
    latin = _mail("Bericht f\u00fcr Q3")
    latin.set_content(f"Gr\u00fc\u00dfe: {BODY}\n", charset="iso-8859-1", cte="quoted-printable")
    encoded = _mail()
    encoded.set_content(f"{BODY}\n" * 3, cte="base64")
    return {"plain": _bytes(plain), "html": _bytes(html), "alternative": _bytes(alternative),
            "alternative with related HTML": _bytes(related), "attachments": _bytes(attached),
            "latin-1 quoted-printable": _bytes(latin), "base64": _bytes(encoded), "the office test's mail": _EML}


def _former(data: bytes) -> list[Element]:
    """What the parser gave before: unstructured's partitioner, the subject from its metadata."""
    from io import BytesIO

    from unstructured.partition.email import partition_email

    raw = partition_email(file=BytesIO(data), process_attachments=False, languages=[""])
    elements = map_markup_elements(raw, heading_offset=1)
    subject = next((item.metadata.subject for item in raw if getattr(item.metadata, "subject", None)), "")
    return ([Element(kind="heading", text=normalize_whitespace(subject), level=1)] if subject else []) + elements


@pytest.mark.parametrize("name", sorted(_single_bodies()))
def test_a_mail_with_one_body_parses_as_before(name: str) -> None:
    data = _single_bodies()[name]
    assert parse_document(data, "m.eml").elements == _former(data)


def test_every_inline_text_part_is_read_in_order_and_attachments_are_not() -> None:
    """A mail written around an attachment: the partitioner kept the first text only."""
    mail = _mail()
    mail.make_mixed()
    first, second = EmailMessage(), EmailMessage()
    first.set_content("The travel policy changes on 1 March: economy class on every flight under six hours.\n")
    second.set_content("<p>The expense limit for meals rises to 40 euros a day from the same date.</p>", subtype="html")
    mail.attach(first)
    mail.add_attachment(b"%PDF-1.4", maintype="application", subtype="pdf", filename="policy.pdf")
    mail.attach(second)
    mail.add_attachment("SECRET_ATTACHMENT_TEXT", filename="notes.txt")
    texts = [e.text for e in parse_document(_bytes(mail), "m.eml").elements]
    assert texts[0] == "Quarterly report"
    assert any("economy class" in t for t in texts) and any("40 euros" in t for t in texts)
    assert [i for i, t in enumerate(texts) if "economy" in t] < [i for i, t in enumerate(texts) if "euros" in t]
    assert not any("SECRET_ATTACHMENT" in t or "PDF" in t for t in texts)
    assert len(_former(_bytes(mail))) < len(texts)  # the partitioner's one body


def _forward(enclosed: EmailMessage, note: str, *, as_attachment: bool) -> EmailMessage:
    mail = _mail(f"Fwd: {enclosed['Subject']}")
    mail.set_content(note)
    mail.add_attachment(enclosed, disposition="attachment" if as_attachment else "inline")
    return mail


@pytest.mark.parametrize("as_attachment", [False, True])
def test_a_forwarded_message_is_read_under_its_own_subject(as_attachment: bool) -> None:
    original = _mail("Contract renewal")
    original.set_content("The supplier contract renews automatically on 1 March unless cancelled by 1 February.\n")
    original.add_attachment("INNER_ATTACHMENT_TEXT", filename="terms.txt")
    data = _bytes(_forward(original, "See the message below.\n", as_attachment=as_attachment))
    elements = parse_document(data, "fwd.eml").elements
    assert elements[0] == Element("heading", "Fwd: Contract renewal", level=1)
    assert Element("heading", "Contract renewal", level=2) in elements
    heading = elements.index(Element("heading", "Contract renewal", level=2))
    assert "renews automatically" in " ".join(e.text for e in elements[heading:])
    assert "See the message below." in " ".join(e.text for e in elements[:heading])
    assert not any("INNER_ATTACHMENT" in e.text for e in elements)
    assert "renews automatically" not in " ".join(e.text for e in _former(data))


def test_messages_enclosed_many_times_keep_their_text_and_bounded_heading_levels() -> None:
    mail = _mail("level 0")
    mail.set_content("Text at level 0.\n")
    for depth in range(1, 41):
        outer = _mail(f"level {depth}")
        outer.set_content(f"Text at level {depth}.\n")
        outer.add_attachment(mail)
        mail = outer
    elements = parse_document(_bytes(mail), "deep.eml").elements
    assert sum(e.text.startswith("Text at level") for e in elements) == 41
    subjects = [e for e in elements if e.kind == "heading" and e.text.startswith("level ")]
    assert [e.level for e in subjects[:5]] == [1, 2, 3, 4, 4] and max(e.level for e in subjects) == 4
    assert max(e.level or 0 for e in elements if e.kind == "heading") == 5  # a body's own heading below it


def test_hostile_and_broken_mails_are_read_or_refused_clearly() -> None:
    unknown_charset = (b"From: a@b.c\r\nSubject: Charset\r\nMIME-Version: 1.0\r\n"
                       b"Content-Type: text/plain; charset=x-no-such-charset\r\n\r\nThe body is read anyway.\r\n")
    assert "The body is read anyway." in [e.text for e in parse_document(unknown_charset, "c.eml").elements]
    subject_only = b"From: a@b.c\r\nSubject: Meeting moved to 3 pm\r\nMIME-Version: 1.0\r\n\r\n"
    assert [e.text for e in parse_document(subject_only, "s.eml").elements] == ["Meeting moved to 3 pm"]
    # 400 KB of encoded words (2.7 s to decode whole, growing faster than the length): the first
    # MAX_SUBJECT_CHARS are decoded
    words = " ".join(["=?utf-8?q?a=C3=A9?="] * 20_000)
    long_subject = parse_document(f"From: a@b.c\r\nSubject: {words}\r\n\r\nbody text\r\n".encode(), "l.eml")
    assert long_subject.elements[0].text.startswith("a\u00e9a\u00e9") and len(long_subject.elements[0].text) < 4_000
    nested = "".join(f'Content-Type: multipart/mixed; boundary="b{i}"\r\n\r\n--b{i}\r\n' for i in range(2_000))
    with pytest.raises(ParseError, match=r"could not read this e-mail \(\.eml\) file"):
        parse_document(f"From: a@b.c\r\nSubject: N\r\nMIME-Version: 1.0\r\n{nested}text\r\n".encode(), "n.eml")


def _raw_mail(charset: str, body: bytes) -> bytes:
    return (f"From: a@example.com\r\nSubject: Budget\r\nContent-Type: text/plain; charset=\"{charset}\"\r\n"
            "Content-Transfer-Encoding: 8bit\r\n\r\n").encode() + body + b"\r\n"


@pytest.mark.parametrize(("charset", "body"), [
    ("utf-8", "M\u00fcller approves the budget of 5,000 EUR for the \u201cBerlin\u201d office.".encode("cp1252")),
    ("us-ascii", "M\u00fcller approves the budget of 5,000 EUR for the \u201cBerlin\u201d office.".encode("utf-8")),
    ("x-no-such-charset", "M\u00fcller approves the budget of 5,000 EUR for the \u201cBerlin\u201d office.".encode("utf-8")),
    ("iso-8859-2", "P\u0159\u00edli\u0161 \u017elu\u0165ou\u010dk\u00fd k\u016f\u0148 \u00fap\u011bl \u010f\u00e1belsk\u00e9 \u00f3dy.".encode("iso-8859-2")),
], ids=["cp1252-labelled-utf8", "utf8-labelled-ascii", "unknown-label", "iso-8859-2-as-labelled"])
def test_a_body_in_another_charset_than_its_label_reads_without_replacement_characters(charset: str, body: bytes) -> None:
    texts = [e.text for e in parse_document(_raw_mail(charset, body), "budget.eml").elements]
    assert "\ufffd" not in "".join(texts)
    assert texts[1] in ("M\u00fcller approves the budget of 5,000 EUR for the \u201cBerlin\u201d office.",
                        "P\u0159\u00edli\u0161 \u017elu\u0165ou\u010dk\u00fd k\u016f\u0148 \u00fap\u011bl \u010f\u00e1belsk\u00e9 \u00f3dy.")
