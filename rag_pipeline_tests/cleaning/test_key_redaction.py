"""Private keys of every format, generated for real at test time (openssl, ssh-keygen; PuTTY
.ppk written by its documented layout), pasted into every supported document format in every
element layout (one element per line, per paragraph, a heading, a table cell, a code block):
after the parse step's redaction no piece of the key material is left, and the counts say
what was really removed. The recovery codes next to a key are redacted and counted truly."""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import io
import os
import re
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

import docx
import pymupdf
import pytest

from rag_pipeline.cleaning.clean import make_safe
from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.types import Element

WINDOW = 16  # any run of this many key-body characters in the output counts as a leak
PROSE = "The deployment runbook explains how the batch servers are reached by the operators on call."


def _run(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True)


def _ssh_string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _putty_key() -> str:
    """An unencrypted PuTTY-User-Key-File-3 for a fresh ed25519 key, MAC included."""
    secret = os.urandom(32)
    public = os.urandom(32)  # the layout is what matters; PuTTY never sees this file
    public_blob = _ssh_string(b"ssh-ed25519") + _ssh_string(public)
    private_blob = _ssh_string(secret)
    comment = "eddsa-key-ops"
    mac_input = b"".join(_ssh_string(x) for x in (b"ssh-ed25519", b"none", comment.encode(), public_blob, private_blob))
    mac = hmac.new(b"", mac_input, hashlib.sha256).hexdigest()

    def lines(blob: bytes) -> list[str]:
        text = base64.b64encode(blob).decode()
        return [text[i : i + 64] for i in range(0, len(text), 64)]

    pub, priv = lines(public_blob), lines(private_blob)
    return "\n".join(["PuTTY-User-Key-File-3: ssh-ed25519", "Encryption: none", f"Comment: {comment}",
                      f"Public-Lines: {len(pub)}", *pub, f"Private-Lines: {len(priv)}", *priv, f"Private-MAC: {mac}"])


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("keys")

    def out(name: str) -> str:
        return str(folder / name)

    _run("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", out("pkcs8.pem"))
    _run("openssl", "pkey", "-in", out("pkcs8.pem"), "-traditional", "-out", out("pkcs1.pem"))
    _run("openssl", "pkey", "-in", out("pkcs8.pem"), "-traditional", "-aes256", "-passout", "pass:x", "-out", out("pkcs1-encrypted.pem"))
    _run("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-aes256", "-pass", "pass:x", "-out", out("pkcs8-encrypted.pem"))
    _run("openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", out("ec.pem"))
    _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ops@example", "-f", out("openssh-ed25519"))
    _run("ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", out("openssh-rsa"))
    found = {p.name.removesuffix(".pem"): p.read_text().strip() for p in folder.iterdir() if not p.name.endswith(".pub")}
    found["putty"] = _putty_key()
    return found


def _body(key: str) -> str:
    """The key material: base64 lines (and PuTTY's MAC), without header and footer lines."""
    lines = [line for line in key.splitlines() if not line.startswith(("-----", "PuTTY-", "Comment:", "Encryption:",
                                                                       "Public-Lines", "Private-Lines", "Proc-Type",
                                                                       "DEK-Info"))]
    return "".join(line.removeprefix("Private-MAC: ") for line in lines)


def _leaks(body: str, elements: list[Element]) -> list[str]:
    windows = {body[i : i + WINDOW] for i in range(len(body) - WINDOW + 1)}
    found = []
    for element in elements:
        compact = re.sub(r"[^A-Za-z0-9+/=]", "", element.text)
        found += [compact[i : i + WINDOW] for i in range(len(compact) - WINDOW + 1) if compact[i : i + WINDOW] in windows]
    return found


def _txt_per_line(key: str) -> tuple[str, bytes]:
    return "notes.txt", (PROSE + "\n\n" + "\n\n".join(key.splitlines()) + "\n\nEnd of notes.\n").encode()


def _txt_block(key: str) -> tuple[str, bytes]:
    return "notes.txt", f"{PROSE}\n{key}\nEnd of notes.\n".encode()


def _md_heading_and_paragraphs(key: str) -> tuple[str, bytes]:
    first, *rest = key.splitlines()
    return "runbook.md", (f"# Runbook\n\n{PROSE}\n\n## {first}\n\n" + "\n\n".join(rest) + "\n\n## Next\n\nDone.\n").encode()


def _md_code(key: str) -> tuple[str, bytes]:
    return "runbook.md", f"# Runbook\n\n{PROSE}\n\n```\n{key}\n```\n\nDone.\n".encode()


def _eml(key: str) -> tuple[str, bytes]:
    return "mail.eml", (
        "From: ops@example.com\nTo: dev@example.com\nSubject: server key\nDate: Mon, 1 Jun 2026 10:00:00 +0000\n"
        f"Content-Type: text/plain; charset=utf-8\n\n{PROSE}\n\n{key}\n\nRegards\n"
    ).encode()


def _html(key: str) -> tuple[str, bytes]:
    first, *rest = key.splitlines()
    cell = "<br>".join(html.escape(line) for line in key.splitlines())
    body = (f"<h1>Runbook</h1><p>{PROSE}</p><h2>{html.escape(first)}</h2>"
            + "".join(f"<p>{html.escape(line)}</p>" for line in rest)
            + f"<table><tr><th>host</th><th>key</th></tr><tr><td>batch-1</td><td>{cell}</td></tr></table>"
            + f"<pre>{html.escape(key)}</pre><p>Done.</p>")
    return "runbook.html", f"<html><body><main>{body}</main></body></html>".encode()


def _docx(key: str) -> tuple[str, bytes]:
    document = docx.Document()
    first, *rest = key.splitlines()
    document.add_heading("Runbook", level=1)
    document.add_paragraph(PROSE)
    document.add_heading(first, level=2)
    for line in rest:
        document.add_paragraph(line)
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "host", "key"
    table.cell(1, 0).text, table.cell(1, 1).text = "batch-1", key
    document.add_paragraph("Done.")
    out = io.BytesIO()
    document.save(out)
    return "runbook.docx", out.getvalue()


def _pdf(key: str) -> tuple[str, bytes]:
    document = pymupdf.open()
    page = document.new_page()
    y = 72
    page.insert_text((72, y), "Runbook", fontsize=18)
    y += 30
    page.insert_text((72, y), PROSE[:80], fontsize=10)
    for line in key.splitlines():
        y += 14
        if y > 780:
            page, y = document.new_page(), 72
        page.insert_text((50, y), line, fontsize=8, fontname="cour")
    return "runbook.pdf", document.tobytes()


LAYOUTS: dict[str, Callable[[str], tuple[str, bytes]]] = {
    "txt-one-element-per-line": _txt_per_line,
    "txt-block": _txt_block,
    "md-heading-and-paragraphs": _md_heading_and_paragraphs,
    "md-code-block": _md_code,
    "eml": _eml,
    "html-heading-paragraphs-table-pre": _html,
    "docx-heading-paragraphs-table": _docx,
    "pdf": _pdf,
}
KEY_KINDS = ("pkcs1", "pkcs1-encrypted", "pkcs8", "pkcs8-encrypted", "ec", "openssh-ed25519", "openssh-rsa", "putty")


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("kind", KEY_KINDS)
def test_private_keys_are_redacted_whole_in_every_format_and_layout(keys: dict[str, str], kind: str, layout: str) -> None:
    name, data = LAYOUTS[layout](keys[kind])
    parsed = parse_document(data, name, ParseLimits(ocr=False))
    assert _leaks(_body(keys[kind]), parsed.elements), "the parser dropped the key: the test would prove nothing"
    safe, counts = make_safe(parsed.elements)
    assert _leaks(_body(keys[kind]), safe) == []
    assert counts["secret:private_key"] >= 1
    assert not any("PRIVATE KEY" in e.text or "PuTTY-User-Key" in e.text for e in safe)
    assert any("Done" in e.text or "End of notes" in e.text or "Regards" in e.text for e in safe) or layout == "pdf"


def test_recovery_codes_next_to_a_key_are_redacted_and_counted_truly(keys: dict[str, str]) -> None:
    codes = ["4kd8-2k3d", "8f3k-29dj", "93jd-k2l4", "p3k9-d8s1", "z8x7-c6v5"]
    text = (PROSE + "\n\n" + "\n\n".join(keys["pkcs8"].splitlines()) + "\n\nRecovery codes:\n\n"
            + "\n\n".join(codes) + "\n\nKeep them safe.\n")
    parsed = parse_document(text.encode(), "notes.txt", ParseLimits(ocr=False))
    safe, counts = make_safe(parsed.elements)
    joined = "\n".join(e.text for e in safe)
    assert not any(code in joined for code in codes)
    assert counts["secret:recovery_code"] == len(codes)
    assert counts["secret:private_key"] == 1
    assert joined.count("[REDACTED:recovery_code]") == len(codes)
    assert "Keep them safe." in joined


def test_a_truncated_key_split_over_elements_loses_all_its_lines(keys: dict[str, str]) -> None:
    lines = keys["pkcs1"].splitlines()[:-1]  # no END line: pasted truncated
    elements = [Element("paragraph", PROSE)] + [Element("paragraph", line) for line in lines] + [Element("paragraph", "After the key.")]
    safe, counts = make_safe(elements)
    assert _leaks(_body(keys["pkcs1"]), safe) == []
    assert counts["secret:private_key"] == 1
    assert [e.text for e in safe][-1] == "After the key."


def test_a_synced_key_and_its_codes_are_nowhere_in_the_index_and_paragraph_digests_are_of_redacted_text(
        capsys, tmp_path: Path, db_url: str, keys: dict[str, str], monkeypatch) -> None:
    """End to end: what `show` prints, the chunks, the stored counts and the notice
    paragraph digests hold no key material and no code; digests are of the redacted text, so a
    guessed secret cannot be confirmed against them."""
    from conftest import write_config
    from helpers import query, run_cli, sync

    from rag_pipeline.cleaning.notices import paragraph_digest

    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [ops]\n")
    codes = ["4kd8-2k3d", "8f3k-29dj", "93jd-k2l4"]
    secret_paragraph = "For the batch servers the shared password: Tr0ub4dor-and-3-more-words is used by on-call staff."
    (docs / "notes.txt").write_text(PROSE + "\n\n" + "\n\n".join(keys["openssh-rsa"].splitlines())
                                    + "\n\nRecovery codes:\n\n" + "\n\n".join(codes) + "\n\n" + secret_paragraph + "\n")
    (docs / "guide.md").write_text("# Guide\n\nThe guide describes how expense reports are filed each month.\n")
    config = write_config(tmp_path, db_url, docs=docs)
    code, out = sync(capsys, config)
    assert code == 0, out
    code, shown = run_cli(capsys, "show", "notes.txt", "--config", str(config))
    assert code == 0
    text = str(shown)
    assert _leaks(_body(keys["openssh-rsa"]), [Element("paragraph", text)]) == []
    assert not any(c in text for c in codes) and "Tr0ub4dor" not in text
    chunks = " ".join(r[0] for r in query(db_url, "SELECT text FROM chunks"))
    assert "Tr0ub4dor" not in chunks and _leaks(_body(keys["openssh-rsa"]), [Element("paragraph", chunks)]) == []
    counts = query(db_url, "SELECT v.cleaning_counts FROM document_versions v JOIN documents d ON d.id = v.document_id"
                           " WHERE d.uri = 'notes.txt'")[0][0]
    assert counts["secret:private_key"] == 1 and counts["secret:recovery_code"] == len(codes)
    assert counts["secret:password"] == 1
    stored = {r[0] for r in query(db_url, "SELECT fingerprint FROM paragraph_fingerprints WHERE uri = 'notes.txt'")}
    assert paragraph_digest(secret_paragraph) not in stored
    assert paragraph_digest(secret_paragraph.replace("Tr0ub4dor-and-3-more-words", "[REDACTED:password]")) in stored
    assert query(db_url, "SELECT count(*) FROM run_items") == [(0,)]
