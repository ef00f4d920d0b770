"""Store guarantees: idempotent recorded migrations, one sync per source at a time, re-runs
after a crash without duplicates, and the time-travel visibility rules."""

from __future__ import annotations

import re
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import DEMO_DIR, LATEST_MIGRATION, write_config
from helpers import query, stage_without_gate, sync, wait_until

from rag_pipeline import store
from rag_pipeline.store import database


def test_migrations_apply_once_and_are_recorded(db_url: str, tmp_path: Path) -> None:
    with database.connect(db_url) as conn:
        assert store.migrations.migrate(conn) == []  # the fixture already migrated
        assert store.migrations.schema_version(conn) == LATEST_MIGRATION
        extension = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
        assert extension is not None
    # an applied migration edited afterwards is refused, not silently re-run
    sql = tmp_path / "sql"
    (sql / "migrations").mkdir(parents=True)
    (sql / "views.sql").write_text("SELECT 1;")
    (sql / "migrations" / "001_initial.sql").write_text("SELECT 1; -- edited")
    with database.connect(db_url) as conn, pytest.raises(store.migrations.MigrationError, match="changed after it was applied"):
        store.migrations.migrate(conn, sql)


def test_a_second_sync_of_a_busy_source_is_refused_when_it_may_not_wait(db_url: str) -> None:
    with database.connect(db_url) as conn, database.connect(db_url) as holder:
        store.runs.hold_run(holder, "run-a")  # run-a's step process is alive
        store.runs.create_run(conn, "run-a", ["handbook"], None)  # type: ignore[arg-type]
        store.runs.claim_sources(conn, "run-a", ["handbook"], lambda r, t: True)
        store.runs.create_run(conn, "run-b", ["handbook", "other"], None)  # type: ignore[arg-type]
        with pytest.raises(store.runs.SourceBusyError, match="run-a"):
            store.runs.claim_sources(conn, "run-b", ["handbook", "other"], lambda r, t: True)
        # a different source is free
        store.runs.create_run(conn, "run-c", ["other"], None)  # type: ignore[arg-type]
        store.runs.claim_sources(conn, "run-c", ["other"], lambda r, t: r != "run-a")


def test_a_run_whose_step_process_died_frees_its_source_at_once(db_url: str) -> None:
    """The lock is a session-level lock on the step's connection: a dead process drops it."""
    with database.connect(db_url) as conn:
        holder = database.connect(db_url)
        store.runs.hold_run(holder, "dead")
        store.runs.create_run(conn, "dead", ["handbook"], None)  # type: ignore[arg-type]
        store.runs.claim_sources(conn, "dead", ["handbook"], lambda r, t: True)
        store.work_items.insert_items(conn, "dead", [{"source": "handbook", "uri": "a.md", "action": "new",
                                                      "checksum": "sha256:x", "blob_sha256": None,
                                                      "size_bytes": 1, "acl_groups": []}])
        store.runs.create_run(conn, "next", ["handbook"], None)  # type: ignore[arg-type]
        with pytest.raises(store.runs.SourceBusyError, match="dead"):
            store.runs.claim_sources(conn, "next", ["handbook"], lambda r, t: True)
        holder.close()  # what a kill -9 does to the holder's connection
        store.runs.create_run(conn, "after", ["handbook"], None)  # type: ignore[arg-type]
        store.runs.claim_sources(conn, "after", ["handbook"], lambda r, t: True)
        assert store.runs.get_run(conn, "dead")["status"] == "failed"
        assert conn.execute("SELECT count(*) FROM run_items WHERE run_id = 'dead'").fetchone() == (0,)


def test_between_two_steps_a_lease_keeps_the_run_alive_until_it_expires(db_url: str) -> None:
    with database.connect(db_url) as conn, database.connect(db_url) as holder:
        store.runs.hold_run(holder, "stepping")
        store.runs.create_run(conn, "stepping", ["handbook"], None)  # type: ignore[arg-type]
        store.runs.release_run(holder, "stepping")  # a step ended; the next one has not started
        store.runs.create_run(conn, "next", ["handbook"], None)  # type: ignore[arg-type]
        with pytest.raises(store.runs.SourceBusyError, match="stepping"):
            store.runs.claim_sources(conn, "next", ["handbook"], lambda r, t: True)
        conn.execute("UPDATE runs SET lease_until = now() - interval '1 second' WHERE run_id = 'stepping'")
        store.runs.create_run(conn, "later", ["handbook"], None)  # type: ignore[arg-type]
        store.runs.claim_sources(conn, "later", ["handbook"], lambda r, t: True)
        assert store.runs.get_run(conn, "stepping")["status"] == "failed"


def test_a_crashed_run_does_not_block_the_source_forever(db_url: str) -> None:
    with database.connect(db_url) as conn:
        store.runs.create_run(conn, "crashed", ["handbook"], None)  # type: ignore[arg-type]
        store.runs.create_run(conn, "next", ["handbook"], None)  # type: ignore[arg-type]
        store.runs.claim_sources(conn, "next", ["handbook"], lambda run_id, started: False)
        assert store.runs.get_run(conn, "crashed")["status"] == "failed"


class _Waiter(threading.Thread):
    """A sync in a thread of its own, on its own connections (as a second process would): it
    claims `sources` (recording what it reports while it waits), then works on them, holding
    its run's lock, until `finish` is set; then it publishes."""

    def __init__(self, db_url: str, run_id: str, sources: list[str], wait_seconds: float) -> None:
        super().__init__(daemon=True)
        self.db_url, self.run_id, self.sources, self.wait_seconds = db_url, run_id, sources, wait_seconds
        self.reports: list[str] = []
        self.waiting, self.claimed, self.finish = threading.Event(), threading.Event(), threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        def on_wait(holder: store.runs.SourceHolder, waited: float) -> None:
            self.reports.append(holder.describe())
            self.waiting.set()

        try:
            with database.connect(self.db_url) as conn, database.connect(self.db_url) as lock:
                store.runs.hold_run(lock, self.run_id)  # its step process is alive throughout
                store.runs.claim_sources(conn, self.run_id, self.sources, lambda r, t: True,
                                         wait_seconds=self.wait_seconds, on_wait=on_wait)
                self.claimed.set()
                self.finish.wait(120)
                store.runs.update_run(conn, self.run_id, status="published", finished=True)
        except BaseException as exc:  # noqa: BLE001 -- handed to the test
            self.error = exc


def _status(db_url: str, run_id: str) -> str | None:
    found = query(db_url, "SELECT status FROM runs WHERE run_id = %s", run_id)
    return found[0][0] if found else None


def test_a_sync_that_finds_its_source_held_waits_and_claims_it_when_the_holder_finishes(db_url: str) -> None:
    """A whole-index run and a one-source run of the same source started together: the later
    one waits (saying for whom), then runs; neither fails with "source busy"."""
    single = _Waiter(db_url, "single-run", ["handbook"], wait_seconds=0)
    single.start()
    assert single.claimed.wait(60), single.error
    waiter = _Waiter(db_url, "all-run", ["handbook", "wiki"], wait_seconds=120)
    waiter.start()
    assert waiter.waiting.wait(60), waiter.error
    assert _status(db_url, "all-run") is None  # waiting holds nothing: no row, no claim
    assert re.fullmatch(r"source handbook held by run single-run since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC",
                        waiter.reports[0])
    single.finish.set()
    assert waiter.claimed.wait(60), waiter.error
    waiter.finish.set()
    for thread in (single, waiter):
        thread.join(60)
        assert thread.error is None
    finished, claimed = query(db_url, "SELECT (SELECT finished_at FROM runs WHERE run_id = 'single-run'),"
                                      " (SELECT started_at FROM runs WHERE run_id = 'all-run')")[0]
    assert claimed >= finished  # one after the other
    assert _status(db_url, "single-run") == _status(db_url, "all-run") == "published"


def test_a_holder_that_never_finishes_times_the_waiter_out_with_a_message_naming_it(db_url: str) -> None:
    stuck = _Waiter(db_url, "stuck-run", ["handbook"], wait_seconds=0)
    stuck.start()
    assert stuck.claimed.wait(60), stuck.error
    waiter = _Waiter(db_url, "patient-run", ["handbook"], wait_seconds=2)
    waiter.start()
    waiter.join(60)
    assert isinstance(waiter.error, store.runs.SourceBusyError)
    message = str(waiter.error)
    assert "source handbook held by run stuck-run since" in message
    assert "waited 2 s (source_wait_seconds) and gave up" in message
    assert waiter.reports and "stuck-run" in waiter.reports[0]
    status, error = query(db_url, "SELECT status, error FROM runs WHERE run_id = 'patient-run'")[0]
    assert status == "failed" and error == message  # the index's run history says why
    assert _status(db_url, "stuck-run") == "running"  # the holder is left alone
    stuck.finish.set()
    stuck.join(60)


def test_runs_waiting_for_one_source_take_it_one_after_the_other_never_waiting_for_each_other(db_url: str) -> None:
    first = _Waiter(db_url, "first", ["handbook"], wait_seconds=0)
    first.start()
    assert first.claimed.wait(60), first.error
    waiters = [_Waiter(db_url, name, ["handbook"], wait_seconds=120) for name in ("second", "third")]
    for waiter in waiters:
        waiter.start()
    assert all(w.waiting.wait(60) for w in waiters)
    assert all("held by run first" in w.reports[0] for w in waiters)  # neither waits for the other
    first.finish.set()
    wait_until(lambda: any(w.claimed.is_set() for w in waiters), timeout=60, what="one waiter to claim the source")
    winner, loser = sorted(waiters, key=lambda w: not w.claimed.is_set())
    assert winner.claimed.is_set() and not loser.claimed.is_set() and _status(db_url, loser.run_id) is None
    wait_until(lambda: f"held by run {winner.run_id}" in " ".join(loser.reports), timeout=60,
               what=f"the other waiter to report the source held by {winner.run_id}", explain=lambda: str(loser.reports))
    assert f"source handbook held by run {winner.run_id}" in loser.reports[-1]  # now waits for the winner
    winner.finish.set()
    assert loser.claimed.wait(60), loser.error
    loser.finish.set()
    for thread in (first, *waiters):
        thread.join(60)
        assert thread.error is None
    assert {_status(db_url, r) for r in ("first", "second", "third")} == {"published"}


def test_rerun_after_a_crash_mid_run_leaves_no_duplicates(capsys, tmp_path: Path, db_url: str, demo_copy: Path, embedder, monkeypatch) -> None:
    """A run dies after staging (process killed before the gate); the next sync takes over the
    source, discards the orphaned staged versions and publishes each document exactly once."""
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    config_path = write_config(tmp_path, db_url, docs=demo_copy, eval_set=DEMO_DIR / "eval.yaml")
    stage_without_gate(config_path, db_url, "crashed-run", embedder)
    # the crashed run died between two steps: no process holds its lock; its lease has expired
    query(db_url, "UPDATE runs SET lease_until = now() - interval '1 second' WHERE run_id = 'crashed-run' RETURNING 1")
    code, out = sync(capsys, config_path)
    assert code == 0, out
    assert query(db_url, "SELECT status FROM runs WHERE run_id = 'crashed-run'") == [("failed",)]
    per_doc = query(db_url, "SELECT document_id, count(*) FILTER (WHERE status = 'live'),"
                            " count(*) FILTER (WHERE status = 'staged') FROM document_versions GROUP BY document_id")
    assert len(per_doc) == 7 and all(live == 1 and staged == 0 for _, live, staged in per_doc)
    assert query(db_url, "SELECT count(*) FROM run_items") == [(0,)]


def test_as_of_visibility_follows_validity_windows(db_url: str, embedder) -> None:
    """valid_from <= T < valid_to: the instant of a publish belongs to the new version."""
    import numpy as np

    with database.connect(db_url) as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
        vector = embedder.encode(["the rule"])[0]
        ids = []
        for n, run in enumerate(("r1", "r2"), 1):
            store.runs.create_run(conn, run, ["s"], model_id)
            chunk = {"ord": 0, "section_path": ["A"], "char_start": 0, "char_end": 8, "token_count": 4,
                     "content_hash": f"h{n}", "text": f"rule v{n}", "search_text": f"rule v{n}"}
            fields = {"checksum": f"c{n}", "acl_groups": ["g"], "model_id": model_id}
            store.versions.stage_content_version(conn, run, "s", "doc.md", fields, [chunk], np.stack([vector]))
            store.runs.update_run(conn, run, gate_passed=True)
            store.versions.publish(conn, run)
            ids.append(conn.execute("SELECT valid_from FROM document_versions WHERE run_id = %s", (run,)).fetchone()[0])
        t1, t2 = ids

        def visible(at: datetime) -> list[str]:
            rows = store.search.search_chunks(conn, vector, "rule", ["g"], model_id, 5, store.search.View(as_of=at))
            return [r["text"] for r in rows]

        assert visible(t1 - timedelta(microseconds=1)) == []
        assert visible(t1) == ["rule v1"]
        assert visible(t2 - timedelta(microseconds=1)) == ["rule v1"]
        assert visible(t2) == ["rule v2"]
        assert visible(datetime.now(UTC)) == ["rule v2"]
        assert [r["text"] for r in store.search.search_chunks(conn, vector, "rule", ["other"], model_id, 5, store.search.View(as_of=t2))] == []


def test_a_blob_corrupted_on_disk_is_quarantined_not_indexed(tmp_path: Path, db_url: str, demo_copy: Path, embedder) -> None:
    """Bytes that no longer match their content address (disk damage, a hand edit) are never
    parsed as that version: the file is quarantined at the read stage and the rest goes on."""
    from rag_pipeline.config import load_config
    from rag_pipeline.sync import parse, plan
    from rag_pipeline.sync.context import SyncContext

    config = load_config(write_config(tmp_path, db_url, docs=demo_copy))
    ctx = SyncContext(config=config, db_url=db_url, run_id="blob-run")
    with ctx.connect() as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
    plan.plan_run(ctx, model_id)
    sha = query(db_url, "SELECT blob_sha256 FROM run_items WHERE uri = 'it/security-handbook.md'")[0][0]
    (config.blob_dir / sha[:2] / sha).write_bytes(b"# tampered\n")
    result = parse.parse_items(ctx)
    assert result.counts["quarantined"] == 1 and result.counts["parsed"] == 6
    [(stage, error)] = query(db_url, "SELECT stage, error FROM quarantine WHERE uri = 'it/security-handbook.md'")
    assert stage == "read" and "corrupt on disk" in error
