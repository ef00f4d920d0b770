"""Refused files that hold a private key are not kept in the blob store (issue 22, item 5).

A file the parser refuses is never redacted, so its bytes are the secret itself. Synced from a
real folder source: a key file the parser refuses leaves no blob behind and says why in the
quarantine, a refused file without a key keeps its blob, an unchanged key file is not read
(nor stored) again, and bytes a live version shares are not taken from that version."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from conftest import write_config
from helpers import query, run_cli, sync, versions

KEY_BODY = "MIIEowIBAAKCAQEA7bq3x9Q2m1V0kJ8c4lZl0yPrivateKeyMaterialForTests0123456789abcdefABCD"
PRIVATE_KEY = f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_BODY}\n-----END RSA PRIVATE KEY-----\n".encode()
CERTIFICATE = b"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2VydGlmaWNhdGVGb3JUZXN0cw==\n-----END CERTIFICATE-----\n"


@pytest.fixture(autouse=True)
def _ephemeral_dagster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "_access.yaml").write_text("groups: [all-staff]\n")
    (folder / "parking.md").write_text("# Parking\n\nVisitor parking is behind the warehouse in row K.\n")
    return folder


@pytest.fixture
def config(tmp_path: Path, db_url: str, docs: Path) -> Path:
    return write_config(tmp_path, db_url, docs=docs, extra="limits: {ocr: false}\nmax_failed_share: 1.0\n")


def _blob(config: Path, data: bytes) -> Path:
    sha = hashlib.sha256(data).hexdigest()
    return config.parent / "state" / "blobs" / sha[:2] / sha


def test_a_refused_file_holding_a_private_key_leaves_no_blob(capsys, config: Path, docs: Path, db_url: str) -> None:
    (docs / "deploy_key.pem").write_bytes(PRIVATE_KEY)  # no parser for .pem: refused at "detect"
    (docs / "ca.pem").write_bytes(CERTIFICATE)  # refused the same way, but no secret in it
    utf16 = ("notes\n" + PRIVATE_KEY.decode()).encode("utf-16")
    (docs / "backup.key").write_bytes(utf16)

    code, out = sync(capsys, config)
    assert code == 0, out
    refused = {q["uri"]: q for q in out["quarantined"]}
    assert set(refused) == {"deploy_key.pem", "ca.pem", "backup.key"}
    assert not _blob(config, PRIVATE_KEY).exists()
    assert not _blob(config, utf16).exists()
    assert _blob(config, CERTIFICATE).exists()  # a refused file without a key keeps its bytes
    assert "private key" in refused["deploy_key.pem"]["error"] and "not kept" in refused["deploy_key.pem"]["error"]
    assert "private key" not in refused["ca.pem"]["error"]
    sha = hashlib.sha256(PRIVATE_KEY).hexdigest()  # nothing points at bytes that are gone
    assert query(db_url, "SELECT count(*) FROM run_items WHERE blob_sha256 = %s", sha) == [(0,)]
    # nothing of the key anywhere in the state folder
    for path in (config.parent / "state").rglob("*"):
        if path.is_file():
            assert KEY_BODY.encode() not in path.read_bytes(), path

    code, out = sync(capsys, config)  # unchanged: still refused, not read nor stored again
    assert code == 0, out
    assert not _blob(config, PRIVATE_KEY).exists()
    code, status = run_cli(capsys, "status", "--config", str(config))
    assert "deploy_key.pem" in [q["uri"] for q in status["quarantine"]]


def test_bytes_a_live_version_shares_are_not_taken_from_it(capsys, config: Path, docs: Path, db_url: str) -> None:
    text = b"# Runbook\n\nThe deploy key:\n\n" + PRIVATE_KEY
    (docs / "runbook.md").write_bytes(text)  # parsed, the key redacted, the bytes kept for history
    assert sync(capsys, config)[0] == 0
    assert versions(db_url, "runbook.md")[-1][2:] == ("live", ["all-staff"])
    (docs / "runbook.pem").write_bytes(text)  # the same bytes under a name no parser takes
    code, out = sync(capsys, config)
    assert code == 0, out
    [entry] = out["quarantined"]
    assert entry["uri"] == "runbook.pem" and "kept only for the version" in entry["error"]
    assert _blob(config, text).exists()
