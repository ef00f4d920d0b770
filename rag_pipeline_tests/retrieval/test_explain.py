"""`rag-pipeline explain LOG_ID` and the history views, on real syncs of the demo corpus: a logged
search replays identically as of its time, also after a later sync changed the index, while the
same search today lists what changed (which chunk, which rank); versions say what they changed;
discarded staging attempts are not versions and hold no number; hostile ids and callers are
refused or shown as data."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DEMO_DIR, synced_demo, write_config
from helpers import query, rewrite_history, run_cli, stage_without_gate, sync

from rag_pipeline import cli, store
from rag_pipeline.cli import explain as explain_cli
from rag_pipeline.store import database

POLICY = "policies/travel-policy.pdf"
QUESTION = "Who approves a business trip abroad?"


@pytest.fixture(scope="module")
def demo(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, str]]:
    """The demo corpus synced once (the travel policy's first edition)."""
    with synced_demo(pg_server_url, tmp_path_factory.mktemp("explain")) as found:
        yield found


def _search(capsys, config: Path, *extra: str) -> dict:
    code, data = run_cli(capsys, "search", QUESTION, "--groups", "all-staff", "-k", "3", "--config", str(config), *extra)
    assert code == 0, data
    return data


def test_replay_is_identical_then_and_lists_what_a_later_sync_changed(capsys, demo) -> None:
    config, docs, _ = demo
    searched = _search(capsys, config, "--user", "alice@example.com")
    assert searched["log_id"] and any(r["uri"] == POLICY for r in searched["results"])
    code, before = run_cli(capsys, "explain", str(searched["log_id"]), "--config", str(config))
    assert code == 0 and before["identical"] is True
    assert before["replay"]["identical"] and before["now"]["identical"] and all(t["unchanged"] for t in before["texts"])
    logged = before["search"]
    assert logged["caller"] == "alice@example.com" and logged["groups"] == ["all-staff"] and logged["as_of"] is None
    assert logged["model_name"] and len(logged["model_weights_sha256"]) == 64
    assert [r["chunk_id"] for r in logged["results"]] == [r["chunk_id"] for r in searched["results"]]
    assert all(r["branches"]["vector"]["rank"] >= 1 for r in logged["results"])
    assert logged["candidates"], "the runners-up after k are logged too"
    assert logged["strategy"]["fulltext"]["candidates"] == "by version"  # a small index: its chunks read directly

    shutil.copy(DEMO_DIR / "versions" / "travel-policy.v2.pdf", docs / POLICY)
    assert sync(capsys, config)[0] == 0
    code, after = run_cli(capsys, "explain", str(searched["log_id"]), "--config", str(config))
    assert code == 0
    # as of the search's time the index still answers exactly as it did
    assert after["replay"]["identical"] is True and after["identical"] is True
    assert [r["chunk_id"] for r in after["replay"]["results"]] == [r["chunk_id"] for r in searched["results"]]
    # today the policy's first edition is superseded: its chunks are gone, v2 chunks are new
    now = after["now"]
    assert now["identical"] is False
    gone = [d for d in now["differences"] if d["change"] == "gone"]
    assert gone and all(d["uri"] == POLICY and d["version"] == 1 and d["replayed_rank"] is None for d in gone)
    assert {d["logged_rank"] for d in gone} <= {1, 2, 3}
    assert any(d["change"] == "new" and d["uri"] == POLICY and d["version"] == 2 for d in now["differences"])
    capsys.readouterr()
    assert cli.main(["explain", str(searched["log_id"]), "--config", str(config)]) == 0
    text = capsys.readouterr().out
    assert "alice@example.com" in text and "identical" in text and "different" in text and "gone, rank" in text
    assert "read by version" in text


def test_an_as_of_search_replays_as_of_its_own_time(capsys, demo) -> None:
    config, _, url = demo
    live_from = query(url, "SELECT min(valid_from) FROM document_versions WHERE status IN ('live', 'superseded')")[0][0]
    searched = _search(capsys, config, "--as-of", live_from.isoformat())
    code, explained = run_cli(capsys, "explain", str(searched["log_id"]), "--config", str(config))
    assert code == 0 and explained["identical"] and explained["now"] is None
    assert explained["replay"]["as_of"].startswith(live_from.isoformat()[:19])


@pytest.mark.parametrize("log_id", ["0", "-1", "99999999999999999999999", "9223372036854775808", "abc", "12abc", "١٢", " ", "987654321"])
def test_explain_of_a_missing_or_malformed_id_is_a_usage_error(capsys, demo, log_id: str) -> None:
    config, _, _ = demo
    capsys.readouterr()
    code = cli.main(["explain", log_id, "--config", str(config), "--json"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert "LOG_ID must be a positive whole number" in captured.err or "no logged search with id" in captured.err


def test_a_caller_with_control_characters_is_recorded_as_given_and_shown_as_data(capsys, demo) -> None:
    config, _, url = demo
    hostile = "eve\x1b]0;owned\x07\x1b[2J[bold]x[/bold]\u202e"
    searched = _search(capsys, config, "--user", hostile)
    assert query(url, "SELECT caller FROM search_log WHERE id = %s", searched["log_id"])[0][0] == hostile
    capsys.readouterr()
    assert cli.main(["explain", str(searched["log_id"]), "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "eve\\x1b]0;owned\\x07" in out and "[bold]x[/bold]" in out
    for user, groups in (("nul\x00user", "all-staff"), ("u" * 5000, "all-staff"), ("ok", ",".join(f"g{i}" for i in range(300)))):
        code = cli.main(["search", QUESTION, "--groups", groups, "--user", user, "--config", str(config), "--json"])
        assert code == 2
        assert "rag-pipeline:" in capsys.readouterr().err


def test_versions_say_what_they_changed_and_discarded_attempts_hold_no_number(
    capsys, tmp_path: Path, db_url: str, demo_copy: Path, embedder, monkeypatch
) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    config = write_config(tmp_path, db_url, docs=demo_copy)
    assert sync(capsys, config)[0] == 0
    # an attempt that never publishes: staged, then its run fails
    shutil.copy(DEMO_DIR / "versions" / "travel-policy.v2.pdf", demo_copy / POLICY)
    stage_without_gate(config, db_url, "abandoned-run", embedder)
    with database.connect(db_url) as conn:
        assert store.runs.fail_run(conn, "abandoned-run", status="failed", reason="test: abandoned")
    # the next sync: new content, an access change and a removal
    (demo_copy / "policies" / "_access.yaml").write_text("groups: [all-staff]\nfiles:\n  remote-work.docx: [all-staff, hr]\n")
    (demo_copy / "it" / "onboarding.html").unlink()
    assert sync(capsys, config)[0] == 0
    history = {
        (r[0], r[1]): r[2:]
        for r in query(db_url, "SELECT uri, version_no, change, status, acl_groups, previous_acl_groups, run_id"
                               " FROM document_history ORDER BY uri, version_no")
    }
    assert (POLICY, 3) not in history and history[(POLICY, 2)][:2] == ("content", "live")
    assert query(db_url, "SELECT count(*) FROM document_history WHERE status = 'discarded'") == [(0,)]
    assert query(db_url, "SELECT version_no FROM document_versions v JOIN documents d ON d.id = v.document_id"
                         " WHERE d.uri = %s AND v.status = 'discarded'", POLICY) == [(2,)]
    change, status, groups, previous, _ = history[("policies/remote-work.docx", 2)]
    assert (change, status, sorted(groups), previous) == ("access", "live", ["all-staff", "hr"], ["all-staff"])
    assert history[("it/onboarding.html", 2)][:2] == ("tombstone", "tombstoned")
    assert history[("it/onboarding.html", 1)][:2] == ("content", "superseded")
    # which runs changed the policy, and why
    changes = query(db_url, "SELECT version_no, change, run_status, gate_passed FROM document_changes"
                            " WHERE uri = %s ORDER BY version_no", POLICY)
    assert [c[:3] for c in changes] == [(1, "content", "published"), (2, "content", "published")]
    code, shown = run_cli(capsys, "history", POLICY, "--config", str(config))
    assert code == 0 and [v["version_no"] for v in shown["versions"]] == [1, 2]
    code, v2 = run_cli(capsys, "show", POLICY, "--version", "2", "--config", str(config))
    assert code == 0 and v2["version"]["status"] == "live"


def test_differences_name_each_chunk_that_moved_went_or_came() -> None:
    from rag_pipeline.retrieval.explain import differences
    from rag_pipeline.retrieval.search import Hit

    def hit(chunk_id: int) -> Hit:
        return Hit(chunk_id=chunk_id, source="s", uri=f"d{chunk_id}", version_no=2, version_id=1, section_path=[],
                   page_start=None, page_end=None, char_start=0, char_end=1, score=0.1, similarity=0.5, text="t",
                   acl_groups=["a"], status="live")

    logged = [{"chunk_id": i, "uri": f"d{i}", "version": 1} for i in (1, 2, 3)]
    assert differences(logged, [hit(1), hit(2), hit(3)]) == []
    found = differences(logged, [hit(2), hit(1), hit(4)])
    assert [(d["chunk_id"], d["change"], d["logged_rank"], d["replayed_rank"]) for d in found] == [
        (1, "moved", 1, 2), (2, "moved", 2, 1), (3, "gone", 3, None), (4, "new", None, 3)]
    assert differences(logged, []) and all(d["change"] == "gone" for d in differences(logged, []))


def test_batch_lines_carry_their_own_caller(capsys, demo, tmp_path: Path) -> None:
    config, _, url = demo
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a", "query": "travel approval", "user": "line-user"}\n'
                    '{"id": "b", "query": "travel approval"}\n'
                    '{"id": "c", "query": "travel approval", "user": 42}\n')
    code, out = run_cli(capsys, "search", "--queries", str(path), "--groups", "all-staff", "--user", "flag-user",
                        "--config", str(config))
    assert code == 1 and [line.get("id") for line in out] == ["a", "b", "c"] and "'user' must be a string" in out[2]["error"]
    callers = [query(url, "SELECT caller FROM search_log WHERE id = %s", line["log_id"])[0][0] for line in out[:2]]
    assert callers == ["line-user", "flag-user"]


def test_explain_under_a_login_that_cannot_replay_says_so(demo, embedder) -> None:
    from rag_pipeline.retrieval.explain import ExplainError, explain

    _, _, url = demo
    from rag_pipeline.retrieval.search import search

    with database.connect(url) as conn:
        log_id = search(conn, embedder, QUESTION, ["all-staff"], user="officer").log_id
        assert explain(conn, embedder, log_id).identical  # the pipeline's own login may
        conn.execute("SET ROLE rag_compliance")
        with pytest.raises(ExplainError, match="may not both read the search log and replay"):
            explain(conn, embedder, log_id)


@pytest.mark.parametrize(("columns", "reason"), [
    ({"results": "'{\"chunk_id\": 1}'"}, "results is a JSON object, not an array"),
    ({"results": "jsonb_build_array(results -> 0 || '{\"chunk_id\": \"abc\"}')"}, "results entry 1 chunk_id"),
    ({"results": "jsonb_build_array((results -> 0) - 'score'::text)"}, "results entry 1 has no score"),
    ({"candidates": "'[[]]'"}, "candidates entry 1 is a JSON array"),
    ({"strategy": "'{\"fulltext\": \"fast\"}'"}, "strategy is not an object"),
    ({"groups": "'{all-staff,NULL}'"}, "groups"),
])
def test_explain_of_a_malformed_log_row_says_so(capsys, demo, columns: dict[str, str], reason: str) -> None:
    """A row written before migration 017, or by a superuser with its checks off: a one-line
    usage error that names what is wrong, never a traceback."""
    config, _, url = demo
    searched = _search(capsys, config, "--user", "before-017")
    names = ["query", "groups", "k", "results", "candidates", "strategy", "caller"]
    values = [columns.get(n, n) for n in names]
    forged = rewrite_history(url, f"INSERT INTO search_log ({', '.join(names)}) SELECT {', '.join(values)}"
                                  " FROM search_log WHERE id = %s RETURNING id", searched["log_id"])[0][0]
    for extra in (["--json"], []):
        capsys.readouterr()
        code = cli.main(["explain", str(forged), "--config", str(config), *extra])
        captured = capsys.readouterr()
        assert code == 2 and captured.out == "", captured
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and f"search {forged} is malformed in the search log" in lines[0] and reason in lines[0], lines
        assert "Traceback" not in captured.err


@pytest.mark.parametrize(("record", "said"), [
    ({"matched": 2245, "tries": 2, "taken": 3, "terms": 12, "threshold": 18.611203, "exact": True,
      "candidates": "index"}, "3 of 12 terms taken, common terms whose bounds exceed 18.6112, read index): proven exact"),
    ({"matched": 3150, "tries": 1, "taken": 2, "terms": 12, "at_least": 4, "exact": True},
     "2 of 12 terms taken, 4 common terms together): proven exact"),
    ({"matched": 20001, "tries": 3, "taken": 1, "terms": 5, "exact": False, "exact_depth": 3},
     "1 of 5 terms taken): exact down to rank 3"),
])
def test_explain_says_how_the_fulltext_branch_asked_for_the_common_terms(record: dict, said: str) -> None:
    """The logged full-text record as `explain` prints it: the threshold or the 'at least m' of the
    last try (store/bm25_aim.py), so an operator sees why a search read the rows it did."""
    assert said in explain_cli._fulltext(record)
