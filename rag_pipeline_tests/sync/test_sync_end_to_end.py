"""The folder-to-index pipeline end to end: real files, real PostgreSQL + pgvector, the real
model, the real Dagster job run by the CLI. Each test names the behaviour users rely on."""

from __future__ import annotations

import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import DEMO_DIR, write_config
from helpers import query, run_cli, search, sync, versions

EVAL = DEMO_DIR / "eval.yaml"
POLICY = "policies/travel-policy.pdf"


@pytest.fixture(autouse=True)
def _ephemeral_dagster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


@pytest.fixture
def config(tmp_path: Path, db_url: str, demo_copy: Path) -> Path:
    return write_config(tmp_path, db_url, docs=demo_copy, eval_set=EVAL)


@pytest.fixture
def synced(capsys, config: Path) -> Path:
    code, out = sync(capsys, config)
    assert code == 0, out
    assert out["status"] == "published"
    return config


def test_first_sync_publishes_the_corpus_with_citations(capsys, synced: Path, db_url: str) -> None:
    live = query(db_url, "SELECT count(*) FROM document_versions WHERE status = 'live'")[0][0]
    assert live == 7
    hits = search(capsys, synced, "Who approves a business trip abroad?", "all-staff", "-k", "3")
    top = hits[0]
    assert top["uri"] == POLICY and top["version"] == 1
    assert "2 Approval" in top["section_path"]
    assert top["pages"][0] == 1 and isinstance(top["chunk_id"], int)
    assert "head of department" in top["text"]
    # every chunk records the model identity and a token count within the model's limit
    rows = query(db_url, "SELECT DISTINCT m.name, m.dimension, m.max_tokens, length(m.weights_sha256)"
                         " FROM chunks c JOIN embedding_models m ON m.id = c.model_id")
    assert rows == [("all-MiniLM-L6-v2", 384, 256, 64)]
    assert query(db_url, "SELECT max(token_count) FROM chunks")[0][0] <= 256


def test_search_filters_by_groups_inside_the_query(capsys, synced: Path) -> None:
    salary = "How much does a warehouse manager earn?"
    as_sales = search(capsys, synced, salary, "sales", "-k", "10")
    assert all(h["uri"] != "hr/salaries-2026.pdf" for h in as_sales)
    as_hr = search(capsys, synced, salary, "hr", "-k", "3")
    assert as_hr[0]["uri"] == "hr/salaries-2026.pdf"
    assert search(capsys, synced, salary, "nobody-group") == []  # default deny
    pricing = search(capsys, synced, "Who approves discounts above 15%?", "all-staff", "-k", "10")
    assert all(not h["uri"].startswith("sales/") for h in pricing)


def test_second_sync_of_unchanged_corpus_changes_nothing(capsys, synced: Path, db_url: str) -> None:
    before = query(db_url, "SELECT id, status, valid_from FROM document_versions ORDER BY id")
    chunks_before = query(db_url, "SELECT count(*) FROM chunks")[0][0]
    code, out = sync(capsys, synced)
    assert code == 0 and out["status"] == "nothing_to_do"
    assert out["counts"]["plan"]["unchanged"] == 7
    assert query(db_url, "SELECT id, status, valid_from FROM document_versions ORDER BY id") == before
    assert query(db_url, "SELECT count(*) FROM chunks")[0][0] == chunks_before
    # `status` says the gate was skipped for the no-op run, not that it passed a check it never ran
    from rag_pipeline import cli

    capsys.readouterr()
    assert cli.main(["status", "--config", str(synced)]) == 0
    text = " ".join(capsys.readouterr().out.split())  # the console may wrap a long line
    runs = [entry.strip() for entry in re.split(r"(?=\brun [0-9a-f-]{36} )", text) if entry.startswith("run ")]
    assert "nothing_to_do" in runs[0] and runs[0].endswith("nothing to do (gate skipped)"), runs
    assert "published" in runs[1] and runs[1].endswith("gate passed"), runs


def test_edited_file_becomes_new_version_and_old_stays_queryable_as_of(capsys, synced: Path, demo_copy: Path, db_url: str) -> None:
    between = datetime.now(UTC).isoformat()
    shutil.copy(DEMO_DIR / "versions" / "travel-policy.v2.pdf", demo_copy / POLICY)
    code, out = sync(capsys, synced)
    assert code == 0 and out["counts"]["plan"]["changed"] == 1
    assert [(v[0], v[2]) for v in versions(db_url, POLICY)] == [(1, "superseded"), (2, "live")]
    question = "Who approves a business trip abroad?"
    now = search(capsys, synced, question, "all-staff", "-k", "1")[0]
    assert now["version"] == 2 and "finance director" in now["text"]
    then = search(capsys, synced, question, "all-staff", "-k", "1", "--as-of", between)[0]
    assert then["version"] == 1 and "finance director" not in then["text"]
    # only edited chunks were embedded again; unchanged sections reused their stored vectors
    embed = out["counts"]["embed"]
    assert embed["reused"] >= 3 and 1 <= embed["embedded"] < embed["reused"] + embed["embedded"]


def test_removed_file_is_tombstoned_gone_for_readers_and_kept_for_audits(capsys, synced: Path, demo_copy: Path,
                                                                         db_url: str) -> None:
    """A deleted document is gone for readers, also as of before its deletion (issue 22, item 2:
    deletion reaches the past); its history stays for the operator's `show --as-of` and compliance."""
    question = "How many weeks of parental leave do I get?"
    assert search(capsys, synced, question, "all-staff")[0]["uri"] == "hr/parental-leave.md"
    between = datetime.now(UTC).isoformat()
    (demo_copy / "hr" / "parental-leave.md").unlink()
    code, out = sync(capsys, synced)
    assert code == 0 and out["counts"]["plan"]["gone"] == 1
    assert [(v[0], v[1], v[2]) for v in versions(db_url, "hr/parental-leave.md")] == [
        (1, "content", "superseded"), (2, "tombstone", "tombstoned")]
    assert all(h["uri"] != "hr/parental-leave.md" for h in search(capsys, synced, question, "all-staff"))
    before = search(capsys, synced, question, "all-staff", "--as-of", between)
    assert before and all(h["uri"] != "hr/parental-leave.md" for h in before)
    code, shown = run_cli(capsys, "show", "hr/parental-leave.md", "--as-of", between, "--config", str(synced))
    assert code == 0 and shown["version"]["version_no"] == 1 and "parental" in " ".join(c["text"] for c in shown["chunks"]).lower()


def test_acl_only_change_makes_new_version_without_reembedding(capsys, synced: Path, demo_copy: Path, db_url: str) -> None:
    (demo_copy / "sales" / "_access.yaml").write_text("groups: [sales, management, all-staff]\n")
    code, out = sync(capsys, synced)
    assert code == 0
    assert out["counts"]["plan"]["acl_changed"] == 1
    assert out["counts"]["staged"] == {"acl_versions": 1}  # nothing parsed, chunked or embedded
    rows = versions(db_url, "sales/pricing-2026.md")
    assert [(v[0], v[2], sorted(v[3])) for v in rows] == [
        (1, "superseded", ["management", "sales"]), (2, "live", ["all-staff", "management", "sales"])]
    same = query(db_url, """
        SELECT bool_and(a.embedding = b.embedding AND a.text = b.text), count(*)
        FROM chunks a JOIN chunks b ON a.ord = b.ord
        JOIN document_versions va ON va.id = a.version_id JOIN document_versions vb ON vb.id = b.version_id
        JOIN documents d ON d.id = va.document_id AND d.id = vb.document_id
        WHERE d.uri = 'sales/pricing-2026.md' AND va.version_no = 1 AND vb.version_no = 2""")[0]
    assert same[0] is True and same[1] > 0
    hits = search(capsys, synced, "Who approves discounts above 15%?", "all-staff", "-k", "3")
    assert hits[0]["uri"] == "sales/pricing-2026.md"


def test_gate_failure_exits_3_and_publishes_nothing(capsys, tmp_path: Path, db_url: str, demo_copy: Path, config: Path) -> None:
    assert sync(capsys, config)[0] == 0
    strict = write_config(tmp_path, db_url, docs=demo_copy, eval_set=EVAL,
                          thresholds={"evidence_recall": 0.8, "mrr": 1.01})  # unreachable
    shutil.copy(DEMO_DIR / "versions" / "travel-policy.v2.pdf", demo_copy / POLICY)
    code, out = sync(capsys, strict)
    assert code == 3
    assert out["status"] == "gate_failed" and "mrr" in out["error"]
    assert [(v[0], v[2]) for v in versions(db_url, POLICY)] == [(1, "live"), (2, "discarded")]
    hit = search(capsys, strict, "Who approves a business trip abroad?", "all-staff", "-k", "1")[0]
    assert hit["version"] == 1


def test_bad_input_is_quarantined_the_rest_publishes_and_old_version_stays_live(
    capsys, synced: Path, tmp_path: Path, db_url: str, demo_copy: Path
) -> None:
    (demo_copy / "corrupt.pdf").write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 100)
    (demo_copy / "empty.md").write_bytes(b"")
    (demo_copy / "data.xyz").write_bytes(b"some bytes")
    (demo_copy / "latin1.txt").write_bytes("Gr\xfc\xdfe aus M\xfcnchen".encode("latin-1"))
    (demo_copy / "policies" / "remote-work.docx").write_bytes(b"PK\x03\x04 this is not really a zip")
    (demo_copy / "new-policy.md").write_text("# Fleet\n\nCompany vans are refuelled at the depot in Bremen.\n")
    lenient = write_config(tmp_path, db_url, docs=demo_copy, eval_set=EVAL, extra="max_failed_share: 0.9\n")
    code, out = sync(capsys, lenient)
    assert code == 0, out
    errors = {q["uri"]: (q["stage"], q["error"]) for q in out["quarantined"]}
    assert set(errors) == {"corrupt.pdf", "empty.md", "data.xyz", "latin1.txt", "policies/remote-work.docx"}
    assert "empty" in errors["empty.md"][1]
    assert "unsupported file type '.xyz'" in errors["data.xyz"][1]
    assert "UTF-8" in errors["latin1.txt"][1]
    assert all(message for _, message in errors.values())
    # the broken edition did not replace the good one
    assert [(v[0], v[2]) for v in versions(db_url, "policies/remote-work.docx")] == [(1, "live")]
    assert search(capsys, lenient, "Where are company vans refuelled?", "all-staff", "-k", "1")[0]["uri"] == "new-policy.md"


def test_too_many_failures_fail_the_run(capsys, config: Path, demo_copy: Path, db_url: str) -> None:
    for i in range(8):
        (demo_copy / f"broken-{i}.pdf").write_bytes(b"not a pdf at all")
    code, out = sync(capsys, config)
    assert code == 1
    assert "quarantined" in out["error"] and "max_failed_share" in out["error"]
    assert query(db_url, "SELECT count(*) FROM document_versions WHERE status = 'live'")[0][0] == 0


def test_mass_removal_stops_and_needs_an_explicit_flag(capsys, tmp_path: Path, demo_copy: Path, db_url: str) -> None:
    # no evaluation set here: with most documents gone the demo's eval set would (rightly) fail
    synced = write_config(tmp_path, db_url, docs=demo_copy)
    assert sync(capsys, synced)[0] == 0
    for path in demo_copy.rglob("*"):
        if path.is_file() and path.name != "_access.yaml" and path.name != "travel-policy.pdf":
            path.unlink()
    # as a person removing them would: the access file's entries for removed files go too (an
    # entry naming no file stops the source: issue 22)
    hr_access = demo_copy / "hr" / "_access.yaml"
    hr_access.write_text("".join(line for line in hr_access.read_text().splitlines(keepends=True)
                                 if not line.startswith(("files:", "  "))))
    code, out = sync(capsys, synced)
    assert code == 1 and "--allow-mass-tombstone" in out["error"]
    assert query(db_url, "SELECT count(*) FROM document_versions WHERE status = 'tombstoned'")[0][0] == 0
    code, out = sync(capsys, synced, "--allow-mass-tombstone")
    assert code == 0 and out["counts"]["published"]["tombstoned"] == 6


def test_failed_listing_never_tombstones(capsys, synced: Path, demo_copy: Path, db_url: str) -> None:
    (demo_copy / "hr" / "_access.yaml").write_text("groups: hr-without-brackets\n")
    (demo_copy / "it" / "onboarding.html").unlink()
    code, out = sync(capsys, synced)
    assert code == 1
    assert "hr/_access.yaml" in out["error"]
    assert query(db_url, "SELECT count(*) FROM document_versions WHERE status = 'live'")[0][0] == 7


@pytest.fixture(scope="module")
def second_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second sentence-transformers model on disk: the packaged MiniLM saved with a 128-token
    input limit, which changes what it embeds and so its identity."""
    from rag_pipeline.embedding import load_embedder

    path = tmp_path_factory.mktemp("models") / "minilm-128"
    model = load_embedder().model
    original = model.max_seq_length
    model.max_seq_length = 128
    try:
        model.save(str(path))
    finally:
        model.max_seq_length = original
    return path


def test_a_sync_refuses_to_mix_embedding_models(capsys, synced: Path, demo_copy: Path, db_url: str, second_model: Path) -> None:
    other = synced.read_text() + f"embedding: {{model: {second_model}}}\n"
    synced.write_text(other)
    (demo_copy / "new.md").write_text("# New\n\nA new document.\n")
    code, out = sync(capsys, synced)
    assert code == 1 and "never mixes models" in out["error"]
    assert query(db_url, "SELECT count(*) FROM documents WHERE uri = 'new.md'")[0][0] == 0
    assert query(db_url, "SELECT count(DISTINCT model_id) FROM chunks")[0][0] == 1


def test_queries_always_embed_with_the_indexs_model(capsys, synced: Path, second_model: Path) -> None:
    from rag_pipeline import cli

    synced.write_text(synced.read_text() + f"embedding: {{model: {second_model}}}\n")
    capsys.readouterr()
    assert cli.main(["search", "travel approval", "--groups", "all-staff", "--config", str(synced)]) == 1
    assert "index was embedded with all-MiniLM-L6-v2" in capsys.readouterr().err


def test_the_int8_encoder_is_never_mixed_with_fp32_vectors(capsys, synced: Path, demo_copy: Path, db_url: str,
                                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opting in to int8 over an fp32 index is a model change: the sync refuses, nothing is
    staged, and queries refuse to embed with int8 against fp32 vectors."""
    from rag_pipeline import cli

    monkeypatch.setenv("RAG_PIPELINE_CACHE_DIR", str(tmp_path / "cache"))  # its own int8 build
    synced.write_text(synced.read_text() + "embedding: {backend: onnx-int8}\n")
    (demo_copy / "new.md").write_text("# New\n\nA new document.\n")
    code, out = sync(capsys, synced)
    assert code == 1 and "never mixes models" in out["error"]
    assert query(db_url, "SELECT count(*) FROM documents WHERE uri = 'new.md'")[0][0] == 0
    assert query(db_url, "SELECT DISTINCT m.numerics FROM chunks c JOIN embedding_models m ON m.id = c.model_id") == [("fp32",)]
    capsys.readouterr()
    assert cli.main(["search", "travel approval", "--groups", "all-staff", "--config", str(synced)]) == 1
    err = capsys.readouterr().err
    assert "index was embedded with all-MiniLM-L6-v2" in err and "fp32" in err and "(int8) is configured" in err
