"""`rag-pipeline purge URI [--version N] --reason TEXT` (issue 22, item 2) through the CLI, on a real
folder source synced by the real pipeline: the text and vectors go for every role, the stored
source bytes go unless another version needs them, metadata and hashes stay, `show`, `history`
and `explain` say what was purged, a search no longer finds it by its words, later syncs never
bring the same bytes back (not even after a parser upgrade), and every bad request is one line
and exit 2 with nothing changed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from conftest import write_config
from helpers import query, rewrite_history, run_cli, stage_without_gate, sync, versions
from s3_server import Bucket
from test_s3_sync_end_to_end import write_s3_config

from rag_pipeline import cli
from rag_pipeline.store import bm25_stats, database

V1 = b"# Merger\n\nThe quokkanite merger with Northwind closes on the ninth of May.\n"
V2 = b"# Merger\n\nThe quokkanite merger with Northwind closes on the ninth of May.\n\nThe price is secret.\n"
V4 = b"# Merger\n\nThe merger was called off; nothing to announce.\n"


@pytest.fixture(autouse=True)
def _ephemeral_dagster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "_access.yaml").write_text("groups: [all-staff]\n")
    (folder / "merger.md").write_bytes(V1)
    (folder / "parking.md").write_text("# Parking\n\nVisitor parking is behind the warehouse in row K.\n")
    return folder


@pytest.fixture
def config(tmp_path: Path, db_url: str, docs: Path) -> Path:
    return write_config(tmp_path, db_url, docs=docs, extra="limits: {ocr: false}\n")


def _blob(config: Path, data: bytes) -> Path:
    sha = hashlib.sha256(data).hexdigest()
    return config.parent / "state" / "blobs" / sha[:2] / sha


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _found(capsys, config: Path, text: str, mode_words: str = "quokkanite Northwind merger") -> list[dict]:
    code, data = run_cli(capsys, "search", mode_words, "--groups", "all-staff", "--config", str(config))
    assert code == 0, data
    return [r for r in data["results"] if text in r["text"]]


def test_purge_removes_a_versions_text_vectors_and_bytes_and_says_so_everywhere(
        capsys, config: Path, docs: Path, db_url: str) -> None:
    assert sync(capsys, config)[0] == 0
    code, searched = run_cli(capsys, "search", "quokkanite merger", "--groups", "all-staff", "--config", str(config),
                             "--user", "alice")
    assert code == 0 and searched["results"][0]["uri"] == "merger.md"
    (docs / "merger.md").write_bytes(V2)
    assert sync(capsys, config)[0] == 0
    assert _blob(config, V1).exists() and _blob(config, V2).exists()

    code, out = run_cli(capsys, "purge", "merger.md", "--version", "1", "--reason", "shared by mistake",
                        "--config", str(config))
    assert code == 0, out
    assert [(v["version"], v["status"], v["blob"]) for v in out["purged"]] == [(1, "superseded", "deleted")]
    assert out["purged"][0]["chunks"] >= 1 and out["already_purged"] == []
    assert not _blob(config, V1).exists() and _blob(config, V2).exists()

    code, shown = run_cli(capsys, "show", "merger.md", "--version", "1", "--config", str(config))
    assert code == 0 and shown["version"]["purge"]["reason"] == "shared by mistake"
    assert shown["version"]["checksum"] == "sha256:" + hashlib.sha256(V1).hexdigest()  # hashes stay
    assert shown["chunks"] and all(c["text"] == "" and c["purged_at"] for c in shown["chunks"])
    code, history = run_cli(capsys, "history", "merger.md", "--config", str(config))
    assert [(v["version_no"], v["purged_at"] is not None, v["purge_reason"]) for v in history["versions"]] == [
        (1, True, "shared by mistake"), (2, False, None)]
    code, text, _ = _cli(capsys, "history", "merger.md", "--config", str(config))
    assert "PURGED" in text and "shared by mistake" in text

    code, explained = run_cli(capsys, "explain", str(searched["log_id"]), "--config", str(config))
    assert code == 0 and explained["identical"] is False
    purged = [t for t in explained["texts"] if t["purged"]]
    assert purged and all(t["purged"]["reason"] == "shared by mistake" for t in purged)
    assert {d["change"] for d in explained["replay"]["differences"]} >= {"gone"}
    code, text, _ = _cli(capsys, "explain", str(searched["log_id"]), "--config", str(config))
    assert code == 0 and "PURGED" in text and "shared by mistake" in text

    code, again = run_cli(capsys, "purge", "merger.md", "--version", "1", "--reason", "again", "--config", str(config))
    assert code == 0 and again["purged"] == [] and again["already_purged"][0]["reason"] == "shared by mistake"

    assert _found(capsys, config, "price is secret")  # v2 is live and untouched
    code, out = run_cli(capsys, "purge", "merger.md", "--reason", "legal order 2026/17", "--config", str(config))
    assert code == 0 and [v["version"] for v in out["purged"]] == [2] and [v["version"] for v in out["already_purged"]] == [1]
    assert not _blob(config, V2).exists()
    assert not _found(capsys, config, "quokkanite") and not _found(capsys, config, "price")
    code, data = run_cli(capsys, "search", "quokkanite", "--groups", "all-staff", "--config", str(config))
    assert all(r["uri"] != "merger.md" for r in data["results"])  # not by its words either
    with database.connect(db_url) as conn:
        assert bm25_stats.kept(conn) == bm25_stats.recount(conn)
        assert conn.execute("SELECT count(*) FROM fts_acl_terms WHERE lexeme = 'quokkanit'").fetchone()[0] == 0
    assert query(db_url, "SELECT count(*) FROM chunks WHERE text LIKE '%%quokkanite%%'") == [(0,)]
    assert query(db_url, "SELECT count(*) FROM run_items") == [(0,)]


def test_a_sync_never_brings_the_same_bytes_back(capsys, config: Path, docs: Path, db_url: str) -> None:
    assert sync(capsys, config)[0] == 0
    assert run_cli(capsys, "purge", "merger.md", "--reason", "shared by mistake", "--config", str(config))[0] == 0
    assert sync(capsys, config)[0] == 0  # the file is unchanged: nothing to do for it
    assert [v[:3] for v in versions(db_url, "merger.md")] == [(1, "content", "live")]
    assert not _blob(config, V1).exists()  # not stored again either
    # a parser upgrade re-parses every live document from its bytes, but not a purged one
    rewrite_history(db_url, "UPDATE document_versions SET parser_version = 'markdown-0.1+old' RETURNING id")
    assert sync(capsys, config)[0] == 0
    assert [v[:3] for v in versions(db_url, "merger.md")] == [(1, "content", "live")]
    assert versions(db_url, "parking.md")[-1][:3] == (2, "content", "live")  # the upgrade did re-parse the rest
    assert not _found(capsys, config, "quokkanite")
    # an access change is recorded, and its copy of the content is purged too
    (docs / "_access.yaml").write_text("groups: [all-staff, legal]\n")
    assert sync(capsys, config)[0] == 0
    assert versions(db_url, "merger.md")[-1] == (2, "content", "live", ["all-staff", "legal"])
    code, shown = run_cli(capsys, "show", "merger.md", "--config", str(config))
    assert shown["chunks"] and all(c["text"] == "" and c["purged_at"] for c in shown["chunks"])
    # new bytes are new content: the source is the truth
    (docs / "merger.md").write_bytes(V4)
    assert sync(capsys, config)[0] == 0
    assert versions(db_url, "merger.md")[-1][:3] == (3, "content", "live")
    assert _found(capsys, config, "called off", "merger called off")


@pytest.mark.parametrize(("args", "message"), [
    (["nothing.md", "--reason", "x"], "no document 'nothing.md'"),
    (["merger.md", "--version", "9", "--reason", "x"], "has no version 9"),
    (["merger.md", "--version", "0", "--reason", "x"], "--version must be"),
    (["merger.md", "--version", "-3", "--reason", "x"], "--version must be"),
    (["merger.md", "--reason", ""], "--reason is empty"),
    (["merger.md", "--reason", "line one\nline two"], "--reason holds '\\n'"),
    (["merger.md", "--reason", "\x1b[2Jcleared"], "--reason holds '\\x1b'"),
    (["merger.md", "--reason", "r" * 5000], "at most 2,000"),
    (["merger\x00.md", "--reason", "x"], "no document 'merger\\\\x00.md'"),
    (["merger\udce9.md", "--reason", "x"], "no document 'merger\\\\xe9.md'"),
    (["../../etc/passwd", "--reason", "x"], "no document"),
    (["merger.md' OR '1'='1", "--reason", "x"], "no document"),
])
def test_a_bad_purge_request_is_one_line_exit_2_and_changes_nothing(
        capsys, config: Path, db_url: str, args: list[str], message: str) -> None:
    assert sync(capsys, config)[0] == 0
    code, out, err = _cli(capsys, "purge", *args, "--config", str(config))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err, err
    assert query(db_url, "SELECT count(*) FROM chunks WHERE purged_at IS NOT NULL") == [(0,)]
    assert _blob(config, V1).exists()


def test_a_purge_needs_a_reason(capsys, config: Path) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["purge", "merger.md", "--config", str(config)])
    assert exited.value.code == 2 and "--reason" in capsys.readouterr().err


def test_a_tombstone_or_a_version_a_running_sync_stages_is_not_purged(
        capsys, config: Path, docs: Path, db_url: str, embedder) -> None:
    assert sync(capsys, config)[0] == 0
    (docs / "parking.md").unlink()
    assert sync(capsys, config)[0] == 0
    code, _, err = _cli(capsys, "purge", "parking.md", "--version", "2", "--reason", "x", "--config", str(config))
    assert code == 2 and "tombstone" in err
    (docs / "merger.md").write_bytes(V2)
    stage_without_gate(config, db_url, "run-in-flight", embedder)  # staged, its run still running
    code, _, err = _cli(capsys, "purge", "merger.md", "--reason", "x", "--config", str(config))
    assert code == 2 and "being synced by run run-in-flight" in err
    code, _, err = _cli(capsys, "purge", "merger.md", "--version", "2", "--reason", "x", "--config", str(config))
    assert code == 2 and "being synced" in err
    assert query(db_url, "SELECT count(*) FROM purges") == [(0,)]


def test_bytes_an_s3_listing_makes_the_plan_read_again_are_not_kept(capsys, tmp_path: Path, db_url: str,
                                                                      bucket: Bucket) -> None:
    """A bucket lists ETags, not SHA-256: an object whose ETag the index has not learned is read and
    stored to compare it. If those are the purged live version's bytes, they go again."""
    bucket.put("docs/merger.md", V1.decode(), tags={"rag-groups": "all-staff"})
    bucket.put("docs/parking.md", "# Parking\n\nRow K.\n", tags={"rag-groups": "all-staff"})
    config = write_s3_config(tmp_path, db_url, bucket)
    assert sync(capsys, config)[0] == 0
    assert run_cli(capsys, "purge", "merger.md", "--reason", "shared by mistake", "--config", str(config))[0] == 0
    assert not _blob(config, V1).exists()
    query(db_url, "DELETE FROM source_fingerprints RETURNING uri")  # as if never learned (e.g. a new ETag)
    code, out = sync(capsys, config)
    assert code == 0, {k: out.get(k) for k in ("status", "error", "message")}
    assert not _blob(config, V1).exists()
    assert [v[:3] for v in versions(db_url, "merger.md")] == [(1, "content", "live")]
    assert _blob(config, b"# Parking\n\nRow K.\n").exists()  # read again and kept: not purged


def test_a_purged_part_is_not_found_by_naming_its_section(capsys, config: Path, docs: Path) -> None:
    """The structural branch (a question naming "section 4.2") matches a chunk by its section
    path, which a purge keeps: it must still find nothing of a purged version."""
    (docs / "terms.md").write_text("# Terms\n\n## 4.2 Settlement\n\nThe settlement is paid in zorblings within ten days.\n\n"
                                   "## 4.3 Notices\n\nNotices go to the registered office.\n")
    assert sync(capsys, config)[0] == 0

    def named() -> list[str]:
        code, data = run_cli(capsys, "search", "what does section 4.2 say?", "--groups", "all-staff", "--config", str(config))
        assert code == 0, data
        return [r["uri"] for r in data["results"] if r["section_path"] and "4.2 Settlement" in r["section_path"]]

    assert named() == ["terms.md"]
    code, out = run_cli(capsys, "purge", "terms.md", "--reason", "legal order", "--config", str(config))
    assert code == 0, out
    assert named() == []
