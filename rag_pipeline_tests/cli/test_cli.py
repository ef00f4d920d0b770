"""The CLI contract of DESIGN.md, which other tools script against: commands, --json shapes,
exit codes, and clear errors for bad arguments and bad input files."""

from __future__ import annotations

import json
import shutil
from datetime import UTC
from pathlib import Path

import pytest
from conftest import DEMO_DIR, LATEST_MIGRATION, synced_demo, write_config
from helpers import collections_started, run_cli

POLICY = "policies/travel-policy.pdf"


@pytest.fixture(scope="module")
def index(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One demo index with two versions of the travel policy, shared by the read-only tests."""
    root = tmp_path_factory.mktemp("cli")
    with synced_demo(pg_server_url, root) as (config, docs, _):
        from rag_pipeline import cli

        (root / "between").write_text(_now())
        shutil.copy(DEMO_DIR / "versions" / "travel-policy.v2.pdf", docs / POLICY)
        assert cli.main(["sync", "--config", str(config), "--json"]) == 0
        yield config, root


def _now() -> str:
    from datetime import datetime

    return datetime.now(UTC).isoformat()


def test_history_lists_every_version(capsys, index) -> None:
    config, _ = index
    code, data = run_cli(capsys, "history", POLICY, "--config", str(config))
    assert code == 0
    rows = data["versions"]
    assert [(v["version_no"], v["status"]) for v in rows] == [(1, "superseded"), (2, "live")]
    assert rows[0]["valid_to"] == rows[1]["valid_from"]
    assert rows[0]["acl_groups"] == ["all-staff"] and rows[0]["checksum"].startswith("sha256:")
    assert rows[0]["model_name"] == "all-MiniLM-L6-v2" and rows[0]["run_id"] != rows[1]["run_id"]
    # accepted with the source prefix too
    assert run_cli(capsys, "history", "larkspur/" + POLICY, "--config", str(config))[1]["versions"] == rows


def test_show_gives_a_versions_chunks_in_order_for_audits(capsys, index) -> None:
    config, root = index
    code, v1 = run_cli(capsys, "show", POLICY, "--version", "1", "--config", str(config))
    assert code == 0 and v1["version"]["version_no"] == 1
    ords = [c["ord"] for c in v1["chunks"]]
    assert ords == sorted(ords) and len(ords) > 3
    assert all(c["char_end"] > c["char_start"] for c in v1["chunks"])
    text1 = " ".join(c["text"] for c in v1["chunks"])
    assert "finance director" not in text1
    _, as_of = run_cli(capsys, "show", POLICY, "--as-of", (root / "between").read_text(), "--config", str(config))
    assert as_of["version"]["version_no"] == 1
    _, live = run_cli(capsys, "show", POLICY, "--config", str(config))
    assert live["version"]["version_no"] == 2 and "finance director" in " ".join(c["text"] for c in live["chunks"])


def test_search_is_logged_for_replay(capsys, index) -> None:
    config, _ = index
    code, data = run_cli(capsys, "search", "per diem in Berlin", "--groups", "all-staff", "-k", "2", "--config", str(config))
    assert code == 0 and len(data["results"]) == 2
    from helpers import query

    from rag_pipeline.config import load_config

    url = load_config(config).database_url
    logged = query(url, "SELECT query, groups, k, results FROM search_log ORDER BY id DESC LIMIT 1")[0]
    assert logged[0] == "per diem in Berlin" and logged[1] == ["all-staff"] and logged[2] == 2
    assert [r["chunk_id"] for r in logged[3]] == [r["chunk_id"] for r in data["results"]]


def test_batch_search_answers_each_line_and_reports_broken_lines(capsys, index, tmp_path: Path) -> None:
    config, root = index
    lines = [
        json.dumps({"id": "a", "query": "Who approves a business trip abroad?"}),
        "{not json",
        json.dumps({"id": "b", "query": "salary of a warehouse manager", "groups": ["hr"]}),
        json.dumps({"id": "c", "query": "approval of trips", "as_of": (root / "between").read_text()}),
        json.dumps({"id": "d", "query": 42}),
        json.dumps({"id": "e", "query": "x", "as_of": "yesterday-ish"}),
    ]
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, out = run_cli(capsys, "search", "--queries", str(path), "--groups", "all-staff", "--config", str(config))
    assert code == 1  # some lines failed; every line still got its answer line
    assert [o.get("id") for o in out] == ["a", None, "b", "c", "d", "e"]
    assert out[0]["results"][0]["uri"] == POLICY
    assert "q.jsonl:2" in out[1]["error"]
    assert out[2]["results"][0]["uri"] == "hr/salaries-2026.pdf"
    assert all(r["version"] == 1 for r in out[3]["results"] if r["uri"] == POLICY)
    assert "string 'query'" in out[4]["error"] and "ISO 8601" in out[5]["error"]


def test_hostile_and_huge_queries_are_data_or_clear_errors(capsys, index, tmp_path: Path) -> None:
    config, _ = index
    lines = [
        json.dumps({"id": "huge", "query": "freight and travel approval " * 20_000}),
        json.dumps({"id": "syntax", "query": "\"unbalanced & | ! ( <-> :* 'quote"}),
        json.dumps({"id": "injection", "query": "travel", "groups": ["all-staff'; DROP TABLE chunks;--"]}),
    ]
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, out = run_cli(capsys, "search", "--queries", str(path), "--groups", "all-staff", "--config", str(config))
    assert code == 1
    assert "limit is 2,000" in out[0]["error"]
    assert out[1]["id"] == "syntax" and "results" in out[1]  # tsquery operators in text are just text
    assert out[2]["results"] == []  # a group name that matches nothing sees nothing
    code, data = run_cli(capsys, "status", "--config", str(config))
    assert data["sources"]["larkspur"]["live_chunks"] > 0  # and nothing was dropped


def test_eval_reports_metrics_per_case_and_rankings(capsys, index) -> None:
    config, _ = index
    code, report = run_cli(capsys, "eval", str(DEMO_DIR / "eval.yaml"), "--config", str(config))
    assert code == 0 and report["passed"]
    assert set(report["metrics"]) >= {"source_recall", "evidence_recall", "ndcg", "mrr", "refusal_accuracy", "acl_leaks", "superseded_hits"}
    assert report["metrics"]["acl_leaks"] == 0
    case = next(c for c in report["cases"] if c["expected"] == "answer")
    assert case["results"] and {"uri", "section_path", "chunk_id", "score"} <= set(case["results"][0])


def test_commands_collect_the_garbage_of_their_work_and_give_the_collector_back(capsys, index) -> None:
    """The CLI pauses the cyclic collector while it loads (rag_pipeline.heap). An evaluation's
    work is still collected, and a caller that runs `main` in its own process gets the collector
    back on with nothing frozen, whether the command succeeded or failed."""
    import gc

    config, _ = index
    thresholds = gc.get_threshold()
    with collections_started() as collections:
        code, report = run_cli(capsys, "eval", str(DEMO_DIR / "eval.yaml"), "--config", str(config))
    assert code == 0 and report["cases"]
    assert collections, "the evaluation ran with the collector off"
    assert gc.isenabled() and gc.get_threshold() == thresholds and gc.get_freeze_count() == 0
    for args in (("search", "trip", "--groups", "all-staff", "--config", str(config)),
                 ("search", "trip", "--groups", "all-staff", "-k", "0", "--config", str(config)),
                 ("status", "--config", str(config) + ".missing")):
        run_cli(capsys, *args)
        assert gc.isenabled() and gc.get_threshold() == thresholds and gc.get_freeze_count() == 0, args


def test_status_shows_sources_model_runs(capsys, index) -> None:
    config, _ = index
    code, status = run_cli(capsys, "status", "--config", str(config))
    assert code == 0
    assert status["sources"]["larkspur"]["live_documents"] == 7
    assert status["models"][0]["name"] == "all-MiniLM-L6-v2"
    assert [r["status"] for r in status["last_runs"][:2]] == ["published", "published"]
    assert status["last_runs"][0]["gate_passed"] is True
    assert status["schema_version"] == LATEST_MIGRATION


def test_config_and_json_are_read_before_the_command_too(capsys, index, tmp_path: Path) -> None:
    """`rag-pipeline --config F status` is what a script writes from "all commands take --config";
    it was refused as an invalid command. One after the command wins over one before it."""
    from rag_pipeline import cli

    config, _ = index
    capsys.readouterr()
    assert cli.main(["--config", str(config), "--json", "status"]) == 0
    before = json.loads(capsys.readouterr().out)
    assert before["sources"]["larkspur"]["live_documents"] == 7
    missing = tmp_path / "none.yaml"
    assert cli.main(["--config", str(missing), "status", "--config", str(config), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sources"] == before["sources"]
    assert cli.main(["--config", str(missing), "sync"]) == 2
    assert "not found" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, words",
    [
        (["search", "q", "--as-of", "not-a-date"], "ISO 8601"),
        (["show", "nope.pdf"], "no document"),
        (["show", POLICY, "--version", "1", "--as-of", "2026-01-01"], "not both"),
        (["show", POLICY, "--version", "99"], "has no version 99"),
        (["search", "q", "--queries", "/nonexistent.jsonl"], "--queries"),
        (["search"], "QUERY or --queries"),
        (["sync", "--source", "nope"], "no source named 'nope'"),
    ],
)
def test_usage_errors_exit_2_with_a_clear_message(capsys, index, args, words) -> None:
    from rag_pipeline import cli

    config, _ = index
    capsys.readouterr()
    assert cli.main([*args, "--config", str(config)]) == 2
    assert words in capsys.readouterr().err


@pytest.mark.parametrize(
    "content, words",
    [
        ("sources: [{name: a, kind: ftp, path: x}]", "sources[0].kind must be one of 'filesystem' or 's3', got 'ftp'"),
        ("sources: {name: a}", "sources must be a list"),
        ("sources: [{kind: filesystem}]", "needs a 'name'"),
        ("evaluation: {k: -3}", "must be positive"),
        ("key: [unclosed", "not valid YAML"),
        ("limits: {max_pagez: 3}", "unknown key limits.max_pagez"),
    ],
)
def test_bad_config_exits_2_naming_the_file(capsys, tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / "rag_pipeline.yaml"
    path.write_text(content)
    from rag_pipeline import cli

    assert cli.main(["status", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert words in err and str(path) in err


def test_missing_config_exits_2(capsys, tmp_path: Path) -> None:
    from rag_pipeline import cli

    assert cli.main(["sync", "--config", str(tmp_path / "none.yaml")]) == 2
    assert "not found" in capsys.readouterr().err


def test_unreachable_database_is_a_clear_error(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rag_pipeline import cli

    config = write_config(tmp_path, "postgresql://nobody@127.0.0.1:1/none", docs=tmp_path)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert cli.main(["status", "--config", str(config)]) == 1
    assert "cannot connect to PostgreSQL" in capsys.readouterr().err


def test_sync_with_credentials_in_the_config_file_exits_2(capsys, tmp_path: Path) -> None:
    from rag_pipeline import cli

    path = tmp_path / "rag_pipeline.yaml"
    path.write_text("sources: [{name: bucket, kind: s3, bucket: docs, aws_secret_access_key: hunter2}]\n")
    assert cli.main(["sync", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "credentials are never read from the config file" in err and "hunter2" not in err


def test_every_bad_batch_line_gets_its_own_error_and_the_good_lines_their_answers(capsys, index, tmp_path: Path) -> None:
    config, _ = index
    good = json.dumps({"id": "good", "query": "Who approves a business trip abroad?"}).encode()
    bad_lines = {
        "as_of-number": json.dumps({"id": "as_of-number", "query": "travel", "as_of": 1700000000}).encode(),
        "as_of-bad-date": json.dumps({"id": "as_of-bad-date", "query": "travel", "as_of": "2026-13-45"}).encode(),
        "nul-query": json.dumps({"id": "nul-query", "query": "travel\u0000policy"}).encode(),
        "nul-group": json.dumps({"id": "nul-group", "query": "travel", "groups": ["all\u0000staff"]}).encode(),
        "huge-line": b'{"id": "huge-line", "query": "' + b"x" * (3 * 1024 * 1024) + b'"}',
        "not-an-object": b'["travel"]',
        "a-number": b"42",
        "invalid-utf8": b'{"id": "bad-utf8", "query": "Gr\xfc\xdfe"}',
        "groups-not-a-list": json.dumps({"id": "groups-not-a-list", "query": "travel", "groups": "all-staff"}).encode(),
        "truncated-json": b'{"id": "truncated", "query": "trav',
        "nested-too-deep": b'{"id": "deep", "query": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
        "id-of-5000-digits": b'{"id": ' + b"9" * 5_000 + b', "query": "travel"}',
    }
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join([good, *bad_lines.values(), good]) + b"\n")
    code, out = run_cli(capsys, "search", "--queries", str(path), "--groups", "all-staff", "--config", str(config))
    assert code == 1
    assert len(out) == len(bad_lines) + 2  # one answer per line, none lost, no traceback
    assert out[0]["results"][0]["uri"] == POLICY and out[-1]["results"][0]["uri"] == POLICY
    errors = out[1:-1]
    assert all("error" in e and e["line"] == n for n, e in enumerate(errors, 2))
    by_kind = dict(zip(bad_lines, (e["error"] for e in errors)))
    assert "ISO 8601" in by_kind["as_of-number"] and "bad.jsonl:3" in by_kind["as_of-bad-date"]
    assert "NUL" in by_kind["nul-query"] and "NUL" in by_kind["nul-group"]
    assert "longer than" in by_kind["huge-line"]
    assert "string 'query'" in by_kind["not-an-object"] and "string 'query'" in by_kind["a-number"]
    assert "utf-8" in by_kind["invalid-utf8"].lower()
    assert "list of strings" in by_kind["groups-not-a-list"]
    assert "recursion" in by_kind["nested-too-deep"] and "4300 digits" in by_kind["id-of-5000-digits"]


def test_show_prints_what_was_embedded_with_each_chunk(capsys, index) -> None:
    """An auditor sees the identity line and section path the model saw before each chunk (the
    policy's title is its first heading too, so it is said once, as the path's top)."""
    from rag_pipeline import cli

    config, _ = index
    _, live = run_cli(capsys, "show", POLICY, "--config", str(config))
    for chunk in live["chunks"]:
        prefix = chunk["search_prefix"]
        assert prefix.startswith("Travel Policy") and prefix.endswith("\n")
        if chunk["section_path"]:
            assert prefix.split("\n")[-2] == " > ".join(chunk["section_path"])
    assert cli.main(["show", POLICY, "--config", str(config)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("embedded as: [Travel Policy") == len(live["chunks"])
