"""`rag-pipeline review` on real answers recorded by `verify` (review_demo): the queue, one answer,
decisions appended (a correction verified again), reviewers added from standard input, and the
errors: an unknown or unreadable answer id is exit 2, as are bad filters and a missing file."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import cli_database
from helpers import query, run_cli
from review_demo import POLICY, ReviewDemo, build


@pytest.fixture(scope="module")
def world(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReviewDemo]:
    with cli_database(pg_server_url) as url:
        yield build(tmp_path_factory.mktemp("review-cli"), url)


def test_list_show_and_decide(capsys, world: ReviewDemo, tmp_path: Path) -> None:
    config = str(world.config)
    code, listed = run_cli(capsys, "review", "list", "--config", config)
    assert code == 0 and [r["answer_id"] for r in listed["answers"]] == [world.hostile, world.flagged]
    code, listed = run_cli(capsys, "review", "list", "--document", POLICY, "--config", config)
    assert code == 0 and [r["answer_id"] for r in listed["answers"]] == [world.flagged]
    code, listed = run_cli(capsys, "review", "list", "--reviewer", "rita", "--config", config)
    assert code == 0 and [r["answer_id"] for r in listed["answers"]] == [world.flagged]
    code, shown = run_cli(capsys, "review", "show", str(world.flagged), "--config", config)
    assert code == 0 and shown["verdict"] == "flagged" and [c["status"] for c in shown["claims"]] == ["supported", "unsupported"]
    assert shown["passages"][0]["uri"] and shown["question"].startswith("Who approves")
    assert query(world.url, "SELECT count(*) FROM review_views WHERE answer_id = %s AND reviewer LIKE 'cli:%%'",
                 world.flagged)[0][0] == 1
    capsys.readouterr()
    from rag_pipeline import cli

    assert cli.main(["review", "show", str(world.hostile), "--config", config]) == 0
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\\x1b" in printed  # the claim's terminal escape, made visible

    correction = tmp_path / "fixed.txt"
    correction.write_text(f"A business trip abroad must be approved in advance by the head of department. "
                          f"[chunk {shown['claims'][0]['citations'][0]['chunk_id']}]", encoding="utf-8")
    code, done = run_cli(capsys, "review", "decide", str(world.flagged), "--correct", str(correction),
                         "--reviewer", "rita", "--comment", "dropped the wrong figure", "--config", config)
    assert code == 0 and done["corrected_verdict"] == "verified" and done["reviewer"] == "rita"
    code, done = run_cli(capsys, "review", "decide", str(world.flagged), "--approve", "--config", config)
    assert code == 0 and done["decision"] == "approve"
    code, listed = run_cli(capsys, "review", "list", "--config", config)
    assert [r["answer_id"] for r in listed["answers"]] == [world.hostile]
    code, shown = run_cli(capsys, "review", "show", str(world.flagged), "--config", config)
    assert [d["decision"] for d in shown["decisions"]] == ["correct", "approve"] and shown["state"] == "approve"


@pytest.mark.parametrize("args", [
    ["show", "999999999"], ["show", "abc"], ["show", "-1"], ["decide", "999999999", "--approve"],
    ["list", "--status", "nope"], ["list", "--since", "soon"], ["list", "--document", "no/such.pdf"],
    ["list", "--reviewer", "nobody"], ["decide", "1", "--correct", "/no/such/file.json"],
])
def test_bad_input_is_exit_2(capsys, world: ReviewDemo, args: list[str]) -> None:
    code, _ = run_cli(capsys, "review", *args, "--config", str(world.config))
    assert code == 2


def test_a_reviewer_without_the_groups_gets_exit_2(capsys, world: ReviewDemo) -> None:
    for args in (["show", str(world.hostile)], ["decide", str(world.hostile), "--reject"]):
        code, _ = run_cli(capsys, "review", *args, "--reviewer", "rita", "--config", str(world.config))
        assert code == 2
    assert query(world.url, "SELECT count(*) FROM review_decisions WHERE answer_id = %s", world.hostile)[0][0] == 0


def test_add_reviewer_reads_the_password_from_stdin(capsys, monkeypatch, world: ReviewDemo) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("a fine long password\n"))
    code, out = run_cli(capsys, "review", "add-reviewer", "nina", "--groups", "hr, all-staff", "--config", str(world.config))
    assert code == 0 and out == {"reviewer": "nina", "added": True, "groups": ["all-staff", "hr"]}
    stored = query(world.url, "SELECT password_hash, groups FROM reviewers WHERE name = 'nina'")[0]
    assert stored[0].startswith("scrypt$") and "a fine long password" not in stored[0] and stored[1] == ["all-staff", "hr"]
    monkeypatch.setattr("sys.stdin", io.StringIO("short\n"))
    assert run_cli(capsys, "review", "add-reviewer", "nina", "--groups", "hr", "--config", str(world.config))[0] == 2
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert run_cli(capsys, "review", "add-reviewer", "nina", "--groups", "hr", "--config", str(world.config))[0] == 2
    code, out = run_cli(capsys, "review", "add-reviewer", "proxy-only", "--groups", "hr", "--no-password",
                        "--config", str(world.config))
    assert code == 0 and query(world.url, "SELECT password_hash FROM reviewers WHERE name = 'proxy-only'")[0][0] is None
