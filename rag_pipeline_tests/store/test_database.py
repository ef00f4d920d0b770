"""The embedded database is a server, owned by its state folder: started on first use or by
`db start`, shared by every process, outliving the process that started it (a kill -9 of a sync
included) and stopped only by `db stop`; `db status` always finds it. Each test has its own
state folder and server, all stopped at the end."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest
from conftest import DEMO_DIR, PROJECT_ROOT
from helpers import wait_until

from rag_pipeline.store import database

ENV = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "HF_HUB_OFFLINE": "1"}
ENV.pop("DATABASE_URL", None)
ENV.pop("DAGSTER_HOME", None)


@pytest.fixture
def state() -> Iterator[Path]:
    """A state folder readable by the server's system user (pytest's tmp root is 0700)."""
    root = Path(tempfile.mkdtemp(prefix="rag-pipeline-test-db-"))
    root.chmod(0o755)
    try:
        yield root / "state"
    finally:
        database.stop_server(root / "state" / "pgdata")
        shutil.rmtree(root, ignore_errors=True)


def _config(state: Path, docs: Path | None = None) -> Path:
    state.parent.joinpath("docs").mkdir(exist_ok=True)
    path = state.parent / "rag_pipeline.yaml"
    path.write_text(f"state_dir: {state}\nsources:\n  - {{name: docs, path: {docs or state.parent / 'docs'}}}\n")
    return path


def _db(config: Path, *args: str) -> tuple[int, dict]:
    """`rag-pipeline db ARGS --json` in its own process, as scripts call it."""
    done = subprocess.run([sys.executable, "-m", "rag_pipeline.cli.main", "db", *args, "--config", str(config), "--json"],
                          env=ENV, capture_output=True, text=True, timeout=180)
    return done.returncode, (json.loads(done.stdout) if done.stdout.strip() else {"stderr": done.stderr})


def _postgres_serving(pgdata: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["name", "cmdline"]):
        if proc.info["name"] == "postgres" and str(pgdata.resolve()) in " ".join(proc.info["cmdline"] or []):
            found.append(proc)
    return found


def test_db_commands_manage_one_server_that_outlives_the_process_that_started_it(state: Path) -> None:
    config = _config(state)
    assert _db(config, "status") == (0, {**_db(config, "status")[1], "running": False})
    code, started = _db(config, "start")  # this process exits right after
    assert code == 0 and started["running"] and started["pid"]
    code, status = _db(config, "status")
    assert code == 0 and status["running"] and status["pid"] == started["pid"]  # still up, the same server
    assert status["started_by"].startswith("pid ") and status["url"] == started["url"]
    code, url = _db(config, "url")
    assert code == 0 and url["url"] == started["url"]
    with psycopg.connect(url["url"]) as conn:  # what psql and DATABASE_URL get
        assert conn.execute("SELECT 1").fetchone() == (1,)
    assert _db(config, "start")[1]["pid"] == started["pid"]  # a second start joins, never a second server
    code, stopped = _db(config, "stop")
    assert code == 0 and stopped["stopped"] is True
    assert _db(config, "status")[1]["running"] is False
    assert _postgres_serving(state / "pgdata") == []
    assert _db(config, "stop")[1]["stopped"] is False  # stopping a stopped server is fine


def test_a_killed_sync_leaves_the_server_owned_and_stoppable_not_orphaned(state: Path, tmp_path: Path) -> None:
    """kill -9 of a sync that started the server: the server is the state folder's, `db status`
    names it, the next command uses it, `db stop` stops it, and no postgres is left behind."""
    docs = tmp_path / "docs"
    shutil.copytree(DEMO_DIR / "docs", docs)
    config = _config(state, docs)
    sync = subprocess.Popen([sys.executable, "-m", "rag_pipeline.cli.main", "sync", "--config", str(config)],
                            env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def owned_server() -> bool:
            server = database.server_state(state / "pgdata")
            if server.running and server.started_by:
                return True
            assert sync.poll() is None, "the sync exited before it started the server"
            return False

        # started and recorded as the sync's (the ownership file follows the server's start)
        wait_until(owned_server, timeout=180, interval=0.2, what="the sync to start the server and record it as its own")
    finally:
        sync.send_signal(signal.SIGKILL)
        sync.wait(30)
    code, status = _db(config, "status")
    assert code == 0 and status["running"] and status["started_by"].startswith(f"pid {sync.pid} ")
    with psycopg.connect(_db(config, "url")[1]["url"]) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    assert _db(config, "stop")[1]["stopped"] is True
    assert _postgres_serving(state / "pgdata") == []


def test_a_stale_pid_file_is_not_taken_for_a_running_server(state: Path) -> None:
    """After a crash or reboot postmaster.pid stays behind, and its pid may now belong to another
    process: status says not running, and the next use starts the server on the same data."""
    pgdata = state / "pgdata"
    url = database.embedded_url(pgdata)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (x int)")
    lines = (pgdata / "postmaster.pid").read_text().splitlines()
    assert database.stop_server(pgdata)
    lines[0] = str(os.getpid())  # a live pid that is not a postgres of this folder
    (pgdata / "postmaster.pid").write_text("\n".join(lines) + "\n")
    state_now = database.server_state(pgdata)
    assert not state_now.running and state_now.stale_pid_file
    url = database.embedded_url(pgdata)
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM kept").fetchone() == (0,)  # same data, not a fresh cluster


def test_a_server_that_cannot_start_says_what_to_check_and_never_to_delete_the_data(state: Path) -> None:
    state.mkdir(parents=True)
    (state / "pgdata").write_text("not a data folder")
    with pytest.raises(database.DatabaseError) as failure:
        database.embedded_url(state / "pgdata")
    message = str(failure.value)
    assert str((state / "pgdata").resolve()) in message and "DATABASE_URL" in message
    assert "delete" not in message.lower() and "keep it" in message


def test_dagsters_database_sits_beside_the_index_on_the_same_server(db_url: str) -> None:
    import sqlalchemy

    url = database.dagster_url(db_url)
    assert database.dagster_url(db_url) == url  # idempotent
    engine = sqlalchemy.create_engine(url)  # Dagster's driver
    try:
        with engine.connect() as conn:
            name = conn.execute(sqlalchemy.text("SELECT current_database()")).scalar()
    finally:
        engine.dispose()
    assert name == psycopg.conninfo.conninfo_to_dict(db_url)["dbname"] + database.DAGSTER_DB_SUFFIX


def test_db_commands_with_database_url_point_at_that_server(tmp_path: Path, db_url: str) -> None:
    config = tmp_path / "rag_pipeline.yaml"
    config.write_text(f"database_url: '{db_url}'\nsources: []\n")
    assert _db(config, "url") == (0, {"url": db_url})
    assert _db(config, "status")[1]["running"] is True
    code, _ = _db(config, "stop")
    assert code == 2  # nothing embedded to stop: a usage error, not a silent success


def _shared_buffers(url: str) -> str:
    with psycopg.connect(url) as conn:
        return conn.execute("SHOW shared_buffers").fetchone()[0]


def test_the_embedded_server_sizes_its_shared_buffers_to_the_machine_and_keeps_an_operators_choice(
        state: Path) -> None:
    """initdb's 128 MB made a broad caller's search read most pages through the kernel (about
    a quarter slower at 100,000 chunks): a new server takes an eighth of the machine's memory
    (store/server_memory.py), from its first start. A value an operator set with ALTER SYSTEM,
    or in postgresql.conf, is never overwritten, and an existing folder still on initdb's value
    gets the machine's at its next start."""
    from rag_pipeline.store import server_memory

    pgdata = state / "pgdata"
    sized = server_memory.shared_buffers_for(server_memory.machine_memory()) or "128MB"
    assert _shared_buffers(database.embedded_url(pgdata)) == sized
    with psycopg.connect(database.embedded_url(pgdata), autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET shared_buffers = '160MB'")
    database.stop_server(pgdata)
    assert _shared_buffers(database.embedded_url(pgdata)) == "160MB"  # the operator's, after a restart
    with psycopg.connect(database.embedded_url(pgdata), autocommit=True) as conn:
        conn.execute("ALTER SYSTEM RESET shared_buffers")  # back to initdb's postgresql.conf value
    database.stop_server(pgdata)
    assert _shared_buffers(database.embedded_url(pgdata)) == sized  # an existing folder is sized too
    database.stop_server(pgdata)
    conf = pgdata / "postgresql.conf"
    conf.write_text(conf.read_text(encoding="utf-8") + "\nshared_buffers = 192MB  # chosen by hand\n", encoding="utf-8")
    (pgdata / "postgresql.auto.conf").write_text("# emptied by hand\n", encoding="utf-8")
    assert _shared_buffers(database.embedded_url(pgdata)) == "192MB"


@pytest.mark.parametrize(("memory", "expected"), [
    (24 * 2**30, "3072MB"),  # an eighth
    (2**40, "8192MB"),  # at most 8 GB
    (2**30, None),  # 128 MB or less: initdb's value stays
    (0, None),
    (None, None),  # memory unknown
])
def test_shared_buffers_are_an_eighth_of_the_memory_within_bounds(memory: int | None, expected: str | None) -> None:
    from rag_pipeline.store import server_memory

    assert server_memory.shared_buffers_for(memory) == expected


def test_a_config_unreadable_unwritable_or_including_other_files_is_left_as_it_is(tmp_path: Path) -> None:
    from rag_pipeline.store import server_memory

    (tmp_path / "postgresql.conf").write_bytes(b"shared_buffers = 128MB\n\xff\xfe broken\n")
    (tmp_path / "postgresql.auto.conf").write_text("# Do not edit this file manually!\n", encoding="utf-8")
    assert server_memory.size_buffers(tmp_path, memory=24 * 2**30) is None
    assert (tmp_path / "postgresql.auto.conf").read_text(encoding="utf-8") == "# Do not edit this file manually!\n"
    (tmp_path / "postgresql.conf").write_text("shared_buffers = 128MB\t# initdb's\n", encoding="utf-8")
    assert server_memory.size_buffers(tmp_path, memory=24 * 2**30) == "3072MB"
    assert server_memory.size_buffers(tmp_path, memory=24 * 2**30) is None  # written once
    assert "shared_buffers = '3072MB'" in (tmp_path / "postgresql.auto.conf").read_text(encoding="utf-8")
    (tmp_path / "postgresql.auto.conf").write_text("", encoding="utf-8")
    (tmp_path / "postgresql.conf").write_text("shared_buffers = 128MB\ninclude_dir = 'conf.d'\n", encoding="utf-8")
    assert server_memory.size_buffers(tmp_path, memory=24 * 2**30) is None  # an included file may set it
    (tmp_path / "postgresql.conf").write_text("shared_buffers = 128MB\n#include_dir = 'conf.d'\n", encoding="utf-8")
    (tmp_path / "postgresql.auto.conf").unlink()  # an auto file that cannot be written: a dangling link
    (tmp_path / "postgresql.auto.conf").symlink_to(tmp_path / "missing-folder" / "postgresql.auto.conf")
    assert server_memory.size_buffers(tmp_path, memory=24 * 2**30) is None
