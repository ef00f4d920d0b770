"""Every kind of bad input, by name: a good edition of each file is synced first, then replaced
by a broken one. Each broken file must be quarantined with its stage and a clear message, its
previous live version must stay live and searchable, and the rest of the run must publish."""

from __future__ import annotations

import io
import os
import shutil
import zipfile

import pymupdf
import pytest
from conftest import DEMO_DIR, cli_database, write_config
from helpers import pathological_markdown, query, search

LIMITS = "limits: {max_bytes: 4000000, max_pages: 40, max_seconds: 4}\nmax_failed_share: 0.95\n"


def _pdf(text: str, pages: int = 1) -> bytes:
    doc = pymupdf.open()
    for n in range(pages):
        doc.new_page().insert_text((72, 72), f"{text} (page {n + 1})", fontsize=11)
    return doc.tobytes()


def _encrypted_pdf(text: str) -> bytes:
    doc = pymupdf.open("pdf", _pdf(text))
    out = io.BytesIO()
    doc.save(out, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="owner")
    return out.getvalue()


def _zip_bomb_docx() -> bytes:
    """A .docx-shaped zip whose document part inflates to 600 MB from a few hundred KB."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            block = b"\0" * (1 << 20)
            for _ in range(600):
                member.write(block)
    return out.getvalue()


# kind -> (file name, good bytes, bad bytes, expected stage, words in the message)
CASES = {
    "corrupt": ("corrupt.pdf", _pdf("The corrupt victim mentions aardvark logistics."),
                b"%PDF-1.7\n" + os.urandom(3000), None, "pdf"),
    "truncated": ("truncated.pdf", _pdf("The truncated victim mentions bison freight."),
                  _pdf("The truncated victim mentions bison freight.")[:400], None, "pdf"),
    "encrypted": ("encrypted.pdf", _pdf("The encrypted victim mentions caribou cargo."),
                  _encrypted_pdf("The encrypted victim mentions caribou cargo."), None, "password"),
    "mislabelled": ("mislabelled.pdf", _pdf("The mislabelled victim mentions dromedary depots."),
                    b"<!DOCTYPE html><html><body><p>Not a PDF</p></body></html>", "detect", "HTML"),
    "empty": ("empty.md", b"# Emu\n\nThe empty victim mentions emu express.\n", b"", "limits", "empty"),
    "invalid_encoding": ("encoding.txt", b"The encoding victim mentions ferret freight.",
                         "The encoding victim mentions ferret fr\xe9ight.".encode("latin-1"), None, "UTF-8"),
    "archive_bomb": ("bomb.docx", (DEMO_DIR / "docs" / "policies" / "remote-work.docx").read_bytes(),
                     _zip_bomb_docx(), "limits", "archive bomb"),
    "oversized": ("big.md", b"# Gnu\n\nThe oversized victim mentions gnu gateways.\n",
                  b"# Gnu\n\n" + b"gnu gateways and more words. " * 200_000, "limits", "max_bytes"),
    "too_many_pages": ("long.pdf", _pdf("The long victim mentions hippo hauliers."),
                       _pdf("The long victim mentions hippo hauliers.", pages=60), None, "pages"),
    "parse_timeout": ("nested.md", b"# Ibis\n\nThe nested victim mentions ibis imports.\n",
                      pathological_markdown(), "parse", "longer than"),
}
GOOD_PHRASE = {kind: case[1] for kind, case in CASES.items()}


@pytest.fixture(scope="module")
def outcome(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("bad")
    docs = root / "docs"
    shutil.copytree(DEMO_DIR / "docs", docs)
    (docs / "victims").mkdir()
    (docs / "victims" / "_access.yaml").write_text("groups: [all-staff]\n")
    for name, good, *_ in CASES.values():
        (docs / "victims" / name).write_bytes(good)
    from rag_pipeline import cli

    with cli_database(pg_server_url) as url:
        config = write_config(root, url, docs=docs, extra=LIMITS)
        first = cli.main(["sync", "--config", str(config), "--json"])
        for name, _, bad, *_ in CASES.values():
            (docs / "victims" / name).write_bytes(bad)
        (docs / "victims" / "fresh.md").write_text("# Jackal\n\nThe fresh document mentions jackal junctions.\n")
        yield {"config": config, "url": url, "first": first}


@pytest.fixture(scope="module")
def second_sync(outcome):
    import json
    import sys

    from rag_pipeline import cli

    buffer = io.StringIO()
    real, sys.stdout = sys.stdout, buffer
    try:
        code = cli.main(["sync", "--config", str(outcome["config"]), "--json"])
    finally:
        sys.stdout = real
    return code, json.loads(buffer.getvalue())


def test_first_sync_published_every_good_edition(outcome) -> None:
    assert outcome["first"] == 0
    uris = [f"victims/{case[0]}" for case in CASES.values()]
    live = query(outcome["url"], "SELECT d.uri FROM document_versions v JOIN documents d ON d.id = v.document_id"
                                 " WHERE v.status = 'live' AND d.uri = ANY(%s)", uris)
    assert len(live) == len(CASES)


def test_run_with_broken_files_still_publishes_the_rest(second_sync, outcome) -> None:
    code, out = second_sync
    assert code == 0, out
    assert out["status"] == "published"
    fresh = query(outcome["url"], "SELECT v.status FROM document_versions v JOIN documents d ON d.id = v.document_id"
                                  " WHERE d.uri = 'victims/fresh.md'")
    assert fresh == [("live",)]


@pytest.mark.parametrize("kind", sorted(CASES))
def test_broken_file_is_quarantined_and_its_previous_version_stays_live(kind: str, second_sync, outcome, capsys) -> None:
    name, good, _, stage, words = CASES[kind]
    _, out = second_sync
    entries = [q for q in out["quarantined"] if q["uri"] == f"victims/{name}"]
    assert len(entries) == 1, out["quarantined"]
    entry = entries[0]
    assert words.lower() in entry["error"].lower(), entry
    if stage:
        assert entry["stage"] == stage, entry
    rows = query(outcome["url"], "SELECT v.version_no, v.status FROM document_versions v JOIN documents d"
                                 " ON d.id = v.document_id WHERE d.uri = %s ORDER BY v.version_no", f"victims/{name}")
    assert rows == [(1, "live")]
    phrase = _phrase(good)
    hits = search(capsys, outcome["config"], phrase, "all-staff", "-k", "3")
    assert any(h["uri"] == f"victims/{name}" for h in hits), (phrase, [h["uri"] for h in hits])


def _phrase(good: bytes) -> str:
    if good.startswith(b"%PDF"):
        return pymupdf.open("pdf", good)[0].get_text().split("(page")[0].strip()
    if good.startswith(b"PK"):
        return "remote work"
    return good.decode().splitlines()[-1]
