"""Incremental syncs cost what changed: a no-op sync encodes nothing, loads no model and skips
the gate with its reason; an edited section re-encodes only the chunks whose text changed.
Real demo files, real PostgreSQL, the real model, the real Dagster job run by the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DEMO_DIR, PROJECT_ROOT, write_config
from helpers import query, sync

from rag_pipeline.sync.gate import NOTHING_STAGED

HANDBOOK = "it/security-handbook.md"


@pytest.fixture(autouse=True)
def _ephemeral_dagster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


@pytest.fixture
def synced(capsys, tmp_path: Path, db_url: str, demo_copy: Path) -> Path:
    config = write_config(tmp_path, db_url, docs=demo_copy, eval_set=DEMO_DIR / "eval.yaml")
    code, out = sync(capsys, config)
    assert code == 0 and out["status"] == "published", out
    assert out["counts"]["embed"]["embedded"] > 0
    return config


def test_a_no_op_sync_encodes_nothing_and_skips_the_gate_with_its_reason(capsys, synced: Path, db_url: str) -> None:
    chunks_before = query(db_url, "SELECT count(*) FROM chunks")[0][0]
    code, out = sync(capsys, synced)
    assert code == 0 and out["status"] == "nothing_to_do", out
    assert out["counts"]["plan"].get("unchanged") == 7
    assert out["counts"].get("embed", {}).get("embedded", 0) == 0
    assert out["gate_passed"] is True and out["gate_reason"] == NOTHING_STAGED
    assert query(db_url, "SELECT count(*) FROM chunks")[0][0] == chunks_before


def _live_hashes(db_url: str, uri: str) -> list[str]:
    return [r[0] for r in query(
        db_url,
        "SELECT c.content_hash FROM chunks c JOIN document_versions v ON v.id = c.version_id"
        " JOIN documents d ON d.id = v.document_id WHERE d.uri = %s AND v.status = 'live' ORDER BY c.ord",
        uri,
    )]


def test_an_edited_section_re_encodes_only_its_changed_chunks(capsys, synced: Path, db_url: str, demo_copy: Path) -> None:
    before = _live_hashes(db_url, HANDBOOK)
    known = {r[0] for r in query(db_url, "SELECT DISTINCT content_hash FROM chunks")}
    path = demo_copy / HANDBOOK
    text = path.read_text(encoding="utf-8")
    edited = text.replace("Passwords must be at least 14 characters long.", "Passwords must be at least 16 characters long.")
    assert edited != text
    path.write_text(edited, encoding="utf-8")

    code, out = sync(capsys, synced)
    assert code == 0 and out["status"] == "published", out
    after = _live_hashes(db_url, HANDBOOK)
    changed = set(after) - known
    assert 1 <= len(changed) < len(after)  # the edited section's chunk(s), not the whole document
    assert out["counts"]["embed"]["embedded"] == len(changed)
    assert out["counts"]["embed"]["reused"] == len(after) - len(changed)
    assert len(before) == len(after)


def test_a_no_op_sync_process_loads_no_model_and_no_parser(synced: Path, tmp_path: Path) -> None:
    """In a fresh process, as `rag-pipeline sync` runs: the heavy libraries stay unimported."""
    probe = (
        "import json, sys\n"
        "from rag_pipeline.cli.main import main\n"
        f"code = main(['sync', '--config', {str(synced)!r}, '--json'])\n"
        "heavy = ('torch', 'sentence_transformers', 'transformers', 'onnxruntime', 'pymupdf', 'unstructured')\n"
        "print(json.dumps({'code': code, 'loaded': [m for m in heavy if m in sys.modules]}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "RAG_PIPELINE_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("DAGSTER_HOME", None)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300, check=False)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"code": 0, "loaded": []}, done.stderr[-2000:]
