"""Store guarantees: idempotent recorded migrations, one sync per source at a time, re-runs
after a crash without duplicates, and the time-travel visibility rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import DEMO_DIR, LATEST_MIGRATION, write_config
from helpers import query, stage_without_gate, sync

from rag_pipeline import database, store


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


def test_a_second_sync_of_a_busy_source_is_refused(db_url: str) -> None:
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
        model_id = store.models.register_model(conn, embedder.identity.as_dict())
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
    from rag_pipeline.sync import plan, process
    from rag_pipeline.sync.context import SyncContext

    config = load_config(write_config(tmp_path, db_url, docs=demo_copy))
    ctx = SyncContext(config=config, db_url=db_url, run_id="blob-run")
    with ctx.connect() as conn:
        model_id = store.models.register_model(conn, embedder.identity.as_dict())
    plan.plan_run(ctx, model_id)
    sha = query(db_url, "SELECT blob_sha256 FROM run_items WHERE uri = 'it/security-handbook.md'")[0][0]
    (config.blob_dir / sha[:2] / sha).write_bytes(b"# tampered\n")
    result = process.parse_items(ctx)
    assert result.counts["quarantined"] == 1 and result.counts["parsed"] == 6
    [(stage, error)] = query(db_url, "SELECT stage, error FROM quarantine WHERE uri = 'it/security-handbook.md'")
    assert stage == "read" and "corrupt on disk" in error
