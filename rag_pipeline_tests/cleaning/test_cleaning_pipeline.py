"""Cleaning as the index sees it: boilerplate, corpus-wide notices, secrets and terminal escapes
never reach chunk text; removals are counted per document; denied paths are never indexed;
parser or cleaner changes re-parse on the next sync; scanned pages are OCRed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import write_config
from helpers import query, rewrite_history, sync

NOTICE = ("This document is confidential and intended solely for employees of Larkspur Logistics. "
          "Do not forward it outside the company.")


@pytest.fixture(autouse=True)
def _ephemeral_dagster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


def _chunk_text(db_url: str, uri: str | None = None) -> str:
    rows = query(db_url, "SELECT c.text FROM chunks c JOIN document_versions v ON v.id = c.version_id"
                         " JOIN documents d ON d.id = v.document_id WHERE v.status = 'live'"
                         " AND (%s::text IS NULL OR d.uri = %s) ORDER BY d.uri, c.ord", uri, uri)
    return "\n".join(r[0] for r in rows)


def _counts(db_url: str, uri: str) -> dict:
    return query(db_url, "SELECT v.cleaning_counts FROM document_versions v JOIN documents d ON d.id = v.document_id"
                         " WHERE d.uri = %s AND v.status = 'live'", uri)[0][0]


def test_running_headers_footers_and_page_numbers_never_reach_the_index(capsys, tmp_path: Path, db_url: str, demo_copy: Path) -> None:
    assert sync(capsys, write_config(tmp_path, db_url, docs=demo_copy))[0] == 0
    text = _chunk_text(db_url, "policies/travel-policy.pdf")
    assert "head of department" in text
    assert "Larkspur Logistics - Travel Policy" not in text
    assert "Page 1 of 3" not in text and "Page 2 of 3" not in text
    counts = _counts(db_url, "policies/travel-policy.pdf")
    assert counts.get("running_header", 0) >= 3 and counts.get("running_footer", 0) + counts.get("page_number", 0) >= 3


def test_notices_repeated_across_the_source_are_removed_and_counted(capsys, tmp_path: Path, db_url: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [all-staff]\n")
    topics = ["forklift safety", "pallet labels", "customs forms", "night shifts", "fuel cards"]
    for i, topic in enumerate(topics):
        shared = "\n\nBoth of these two documents share this particular sentence about loading docks." if i < 2 else ""
        (docs / f"doc{i}.md").write_text(f"# {topic.title()}\n\nRules about {topic} number {i} apply at every depot.{shared}\n\n{NOTICE}\n")
    assert sync(capsys, write_config(tmp_path, db_url, docs=docs))[0] == 0
    text = _chunk_text(db_url)
    assert "confidential and intended solely" not in text
    assert text.count("share this particular sentence") == 2  # in 2 of 5 documents: kept
    for i in range(5):
        assert _counts(db_url, f"doc{i}.md")["corpus_notice"] == 1
        assert f"number {i} apply" in text


CLAUSES = {
    "Delivery": "The Supplier shall deliver the goods within 14 calendar days of receiving a purchase order.",
    "Termination": "Either party may terminate this agreement with 90 days written notice to the other party.",
    "Payment": "Invoices are payable within 30 days of receipt; late payments accrue interest at 8 percent a year.",
    "Liability": "The Supplier's total liability is limited to the fees paid in the preceding 12 months.",
    "Jurisdiction": "All disputes arising from this agreement shall be settled by the courts of Vienna.",
}
SUPPLIERS = ["Alpha Logistics GmbH", "Beta Components s.r.o.", "Gamma Textiles Ltd", "Delta Foods SA", "Epsilon Tools AG"]
DEPOTS = ["Brno", "Linz", "Graz", "Ostrava", "Passau"]
METHOD = "Every depot audit samples forty pallets at random and weighs each one against its label."


def test_recurring_text_is_a_notice_only_on_a_documents_edge_and_never_a_templates_clauses(
        capsys, tmp_path: Path, db_url: str) -> None:
    """Five contracts from one template, five reports sharing a method paragraph in their middle
    and a confidentiality notice at their end, three copies of one memo: only the notices go."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [all-staff]\n")
    for i, supplier in enumerate(SUPPLIERS):
        sections = "".join(f"## {title}\n\n{clause}\n\n" for title, clause in CLAUSES.items())
        (docs / f"contract{i}.md").write_text(f"# Supply agreement with {supplier}\n\nThis agreement is made between "
                                              f"Larkspur Logistics and {supplier}, supplier {1000 + i}.\n\n{sections}{NOTICE}\n")
        depot = DEPOTS[i]  # names, not numbers: digits are read as 0 when paragraphs are compared
        (docs / f"audit{i}.md").write_text(f"# Audit of the {depot} depot\n\nThe {depot} depot was audited in spring.\n\n"
                                           f"{METHOD}\n\nAt {depot} the auditors found mislabelled pallets.\n\n{NOTICE}\n")
    for i in range(3):
        (docs / f"memo-copy{i}.md").write_text("# Memo\n\nThe canteen closes at 15:00 on Fridays from March onwards.\n")
    assert sync(capsys, write_config(tmp_path, db_url, docs=docs))[0] == 0
    for i, supplier in enumerate(SUPPLIERS):
        contract = _chunk_text(db_url, f"contract{i}.md")
        assert all(clause in contract for clause in CLAUSES.values()), supplier  # the template's text is theirs
        assert _counts(db_url, f"contract{i}.md").get("corpus_notice", 0) == 0
        audit = _chunk_text(db_url, f"audit{i}.md")
        assert METHOD in audit and f"At {DEPOTS[i]} the auditors" in audit  # recurring, but inside the document
        assert "confidential and intended solely" not in audit  # the notice on its edge goes
        assert _counts(db_url, f"audit{i}.md")["corpus_notice"] == 1
    for i in range(3):  # every paragraph recurs: that text is the document, not a notice
        assert "canteen closes at 15:00" in _chunk_text(db_url, f"memo-copy{i}.md")
    code, found = sync(capsys, write_config(tmp_path, db_url, docs=docs), "--json")  # nothing changed: nothing to do
    assert code == 0
    hits = query(db_url, "SELECT d.uri, c.text FROM chunks c JOIN document_versions v ON v.id = c.version_id"
                         " JOIN documents d ON d.id = v.document_id WHERE v.status = 'live' AND c.text LIKE %s",
                 "%90 days written notice%")
    assert sorted(uri for uri, _ in hits) == [f"contract{i}.md" for i in range(5)]


def test_secrets_and_terminal_escapes_are_neutralised_before_indexing(capsys, tmp_path: Path, db_url: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [it]\n")
    (docs / "admin.md").write_text(
        "# Admin account\n\nThe shared admin login for the depot scanner.\n\n"
        "Wiederherstellungscodes:\n\n- 8f3k-29dj\n- k2m9-x7q1\n- p4n8-w3z6\n\n"
        "Refunds go to IBAN DE89 3704 0044 0532 0130 00 by Friday.\n\n"
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n\n"
        "password: Tr0ub4dor&3\n\n"
        "Status line \x1b[2J\x1b]8;;http://evil.example\x07click\x1b]8;;\x07 done\x07.\n"
    )
    assert sync(capsys, write_config(tmp_path, db_url, docs=docs))[0] == 0
    text = _chunk_text(db_url, "admin.md")
    for secret in ("8f3k-29dj", "k2m9-x7q1", "DE89", "0532 0130", "AKIAIOSFODNN7EXAMPLE", "Tr0ub4dor&3"):
        assert secret not in text, secret
    assert "\x1b" not in text and "\x07" not in text and "click" in text
    assert "[REDACTED:recovery_code]" in text and "[REDACTED:iban]" in text
    counts = _counts(db_url, "admin.md")
    assert counts["secret:recovery_code"] == 3 and counts["secret:iban"] == 1 and counts["secret:password"] == 1
    assert counts["control_characters"] >= 3
    # the secret never reaches the full-text index either
    assert query(db_url, "SELECT count(*) FROM chunks WHERE tsv @@ plainto_tsquery('simple', 'Tr0ub4dor')")[0][0] == 0


def test_denied_paths_are_never_indexed(capsys, tmp_path: Path, db_url: str, demo_copy: Path) -> None:
    (demo_copy / "it" / "server.key").write_text("-----BEGIN PRIVATE KEY-----\nabc\n")
    (demo_copy / "private").mkdir()
    (demo_copy / "private" / "notes.md").write_text("# Private\n\nNot for the index.\n")
    config = write_config(tmp_path, db_url, docs=demo_copy)
    text = config.read_text().replace("kind: filesystem", "kind: filesystem\n  deny: ['*.key', 'private/*']")
    config.write_text(text)
    code, out = sync(capsys, config)
    assert code == 0 and out["counts"]["plan"]["new"] == 7
    assert query(db_url, "SELECT count(*) FROM documents WHERE uri IN ('it/server.key', 'private/notes.md')")[0][0] == 0
    assert not [q for q in out["quarantined"] if q["uri"].endswith(".key")]


def test_a_parser_or_cleaner_change_reparses_on_the_next_sync(capsys, tmp_path: Path, db_url: str, demo_copy: Path) -> None:
    config = write_config(tmp_path, db_url, docs=demo_copy)
    assert sync(capsys, config)[0] == 0
    rewrite_history(db_url, "UPDATE document_versions SET parser_version = 'pymupdf-0.1+old' FROM documents d"
                  " WHERE d.id = document_id AND d.uri = 'policies/travel-policy.pdf' RETURNING 1")
    rewrite_history(db_url, "UPDATE document_versions SET cleaner_version = 'boilerplate0' FROM documents d"
                  " WHERE d.id = document_id AND d.uri = 'it/security-handbook.md' RETURNING 1")
    code, out = sync(capsys, config)
    assert code == 0 and out["counts"]["plan"]["reparse"] == 2 and out["counts"]["plan"]["unchanged"] == 5
    rows = query(db_url, "SELECT d.uri, v.version_no, v.parser_version, v.cleaner_version FROM document_versions v"
                         " JOIN documents d ON d.id = v.document_id WHERE v.status = 'live' AND v.version_no = 2")
    assert {r[0] for r in rows} == {"policies/travel-policy.pdf", "it/security-handbook.md"}
    assert all(r[2] != "pymupdf-0.1+old" and r[3] != "boilerplate0" for r in rows)


def test_scanned_pages_are_ocred_into_the_index(capsys, tmp_path: Path, db_url: str, corpus_dir: Path) -> None:
    if shutil.which("tesseract") is None:
        pytest.fail("Tesseract is not installed: run scripts/setup.sh (apt-get install tesseract-ocr)")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("groups: [all-staff]\n")
    shutil.copy(corpus_dir / "docs" / "scanned" / "linn_two_column_brochure_scan.pdf", docs / "linn.pdf")
    code, out = sync(capsys, write_config(tmp_path, db_url, docs=docs))
    assert code == 0, out
    truth = (corpus_dir / "docs" / "scanned" / "linn_two_column_brochure_scan.groundtruth.txt").read_text()
    words = {w.strip(".,;:()\"'").lower() for w in truth.split() if len(w) > 4}
    text = _chunk_text(db_url, "linn.pdf").lower()
    found = sum(1 for w in words if w in text)
    assert found / len(words) >= 0.8
