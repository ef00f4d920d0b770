"""Small helpers for driving the real CLI in-process and reading the real database."""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import psycopg
import pytest

from rag_pipeline import cli
from rag_pipeline import store as _store
from rag_pipeline.store import database
from rag_pipeline.store import roles as _roles


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    """Run `rag-pipeline ARGS --json`; return the exit code and the parsed JSON (None if none)."""
    capsys.readouterr()
    code = cli.main([*args, "--json"])
    out = capsys.readouterr().out.strip()
    lines = [line for line in out.splitlines() if line.strip()]
    if not lines:
        return code, None
    if len(lines) == 1:
        return code, json.loads(lines[0])
    return code, [json.loads(line) for line in lines]


def sync(capsys: pytest.CaptureFixture[str], config: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    return run_cli(capsys, "sync", "--config", str(config), *extra)


# a second document, so that a search has a result to rank below the one a test cites
ANOTHER_DOCUMENT = {"other.md": "# Travel\n\nHotels are capped at EUR 140 a night.\n"}


def sync_folder(capsys: pytest.CaptureFixture[str], root: Path, db_url: str, files: dict[str, str],
                groups: str = "all-staff") -> Path:
    """A folder `root/docs` of `files` (name -> text) that `groups` may read, synced by the real
    CLI into `db_url` with OCR off; returns the configuration it was synced with."""
    from conftest import write_config

    docs = root / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text(f"groups: [{groups}]\n")
    for name, text in files.items():
        (docs / name).write_text(text, encoding="utf-8")
    config = write_config(root, db_url, docs=docs, extra="limits: {ocr: false}\n")
    code, report = sync(capsys, config)
    assert code == 0, report
    return config


def search(capsys: pytest.CaptureFixture[str], config: Path, query: str, groups: str, *extra: str) -> list[dict[str, Any]]:
    code, data = run_cli(capsys, "search", query, "--groups", groups, "--config", str(config), *extra)
    assert code == 0, data
    return data["results"]


def verify_claims(capsys: pytest.CaptureFixture[str], config: Path, db_url: str, question: str, uri: str,
                  claims: dict[str, str]) -> dict[str, dict[str, Any]]:
    """`question` searched as all-staff (logged), then each claim (label -> text) verified by the
    CLI as a one-claim answer citing `uri`'s first result; returns each claim's result by label."""
    hits = search(capsys, config, question, "all-staff")
    chunk = next(h for h in hits if h["uri"] == uri)
    (log_id,) = query(db_url, "SELECT max(id) FROM search_log")[0]
    results = {}
    for label, text in claims.items():
        answer = config.parent / f"answer-{label}.json"
        answer.write_text(json.dumps({"log_id": log_id, "claims": [{"text": text, "citations": [{"chunk_id": chunk["chunk_id"]}]}]}))
        code, data = run_cli(capsys, "verify", str(answer), "--config", str(config))
        assert code == 0, data
        results[label] = data["claims"][0]
    return results


def query(db_url: str, sql: str, *params: Any) -> list[tuple]:
    with database.connect(db_url) as conn:
        return conn.execute(sql, params).fetchall()


def rewrite_history(db_url: str, sql: str, *params: Any) -> list[tuple]:
    """Run `sql` with the append-only triggers of migration 006 switched off for this transaction
    only: the fault injection of tests that need an index state the pipeline can no longer make
    (e.g. a version recorded by an older parser)."""
    with database.connect(db_url) as conn, conn.transaction():
        conn.execute("SET LOCAL session_replication_role = replica")
        return conn.execute(sql, params).fetchall()


def versions(db_url: str, uri: str) -> list[tuple]:
    """(version_no, kind, status, acl_groups) of a document, oldest first."""
    return query(
        db_url,
        "SELECT v.version_no, v.kind, v.status, v.acl_groups FROM document_versions v"
        " JOIN documents d ON d.id = v.document_id WHERE d.uri = %s ORDER BY v.version_no",
        uri,
    )


def embedded_run(config_path: Path, db_url: str, run_id: str, embedder: Any) -> tuple[Any, int]:
    """Run the core steps plan..embed directly (no Dagster); return the context and the model id.
    For tests of the stage step itself."""
    from rag_pipeline import store
    from rag_pipeline.config import load_config
    from rag_pipeline.sync import chunk, clean, embed, parse, plan
    from rag_pipeline.sync.context import SyncContext

    ctx = SyncContext(config=load_config(config_path), db_url=db_url, run_id=run_id)
    with ctx.connect() as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
    plan.plan_run(ctx, model_id)
    parse.parse_items(ctx)
    clean.clean_items(ctx)
    chunk.chunk_items(ctx, embedder)
    embed.embed_items(ctx, embedder, model_id)
    return ctx, model_id


def stage_without_gate(config_path: Path, db_url: str, run_id: str, embedder: Any) -> tuple[Any, dict[str, Any]]:
    """Run the core steps plan..stage directly (no Dagster, no gate); return the context and
    the stage step's result. For tests of what happens to a run that never reached its gate."""
    from rag_pipeline.sync import stage

    ctx, model_id = embedded_run(config_path, db_url, run_id, embedder)
    return ctx, stage.stage_items(ctx, model_id)


__all__ = ["embedded_run", "psycopg", "query", "rewrite_history", "index_documents", "run_cli", "search",
           "stage_without_gate", "sync", "versions", "wait_until"]


def stage_text(conn: psycopg.Connection, embedder: Any, model_id: int, run_id: str, uri: str, text: str,
               groups: list[str]) -> None:
    """One English content version (a heading, one paragraph) staged into `run_id` with its
    chunks and vectors, as the sync's chunk and stage steps write it, on `conn`'s role."""
    from rag_pipeline import store
    from rag_pipeline.chunking import chunks as chunking
    from rag_pipeline.parsing.types import Element

    elements = [Element("heading", uri, level=1), Element("paragraph", text)]
    chunks = [c.to_dict() for c in chunking.chunk_elements(elements, embedder.count_tokens, embedder.max_tokens)]
    fields = {"model_id": model_id, "acl_groups": groups, "language": "en", "checksum": text}
    store.versions.stage_content_version(conn, run_id, "docs", uri, fields, chunks,
                                         embedder.encode([c["search_text"] for c in chunks]))


def index_documents(db_url: str, embedder: Any, docs: dict[str, tuple[str, str]], group: str) -> None:
    """Stage and publish {uri: (title, body)} exactly as the sync's chunk and stage steps do
    (chunker, per-document language, store), without files or Dagster: for retrieval tests."""
    from rag_pipeline import store
    from rag_pipeline.chunking import chunks as chunking
    from rag_pipeline.parsing.types import Element
    from rag_pipeline.store import text_search

    with database.connect(db_url) as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
        store.runs.create_run(conn, "index-run", ["docs"], model_id)
        for uri, (title, body) in docs.items():
            elements = [Element("heading", title, level=1), Element("paragraph", body)]
            chunks = [c.to_dict() for c in chunking.chunk_elements(elements, embedder.count_tokens, embedder.max_tokens)]
            language = text_search.detect_language(chunking.cleaned_text(elements)[0])
            vectors = embedder.encode([c["search_text"] for c in chunks])
            fields = {"model_id": model_id, "acl_groups": [group], "language": language, "checksum": uri}
            store.versions.stage_content_version(conn, "index-run", "docs", uri, fields, chunks, vectors)
        store.versions.publish(conn, "index-run")


@contextmanager
def collections_started() -> Iterator[list[int]]:
    """The generation of every automatic garbage collection that starts inside the block."""
    started: list[int] = []

    def record(phase: str, info: dict) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(record)
    try:
        yield started
    finally:
        gc.callbacks.remove(record)


T = TypeVar("T")


def wait_until(predicate: Callable[[], T], *, timeout: float, interval: float = 0.1, what: str,
               explain: Callable[[], str] | None = None) -> T:
    """Call `predicate` every `interval` seconds until it returns something truthy, and return
    that. The one way tests wait for something another process or thread does: the timeout is
    only there so a hang fails the test instead of the suite (never a speed assertion), so give
    it room for a busy machine. On timeout the assertion names `what`, the last value seen and,
    if given, `explain()` (a log tail, say). An exception from `predicate` (a process that
    exited, an assert inside it) ends the wait at once."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            details = f"\n{explain()}" if explain is not None else ""
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}; last value: {value!r}{details}")
        time.sleep(interval)


# The access-history index of test_reader_history and test_chunk_acl: five documents, then a run
# that edits, revokes, deletes, narrows and widens one each.
ACL_TEXTS = {
    "keep/1": "Keep: the quarterly zephyrine budget review happens every March.",
    "revoke/1": "Revoked: the zephyrine acquisition of Northwind closes in May.",
    "delete/1": "Deleted: zephyrine layoffs are planned for the logistics team.",
    "narrow/1": "Narrowed: zephyrine salary bands for the board only.",
    "widen/1": "Widened: the zephyrine canteen menu changes weekly.",
}
ACL_FIRST_GROUPS = {"keep/1": ["a"], "revoke/1": ["a"], "delete/1": ["a"], "narrow/1": ["a", "b"], "widen/1": ["a"]}


def acl_first_run(url: str, embedder: Any) -> int:
    """The first run of the access-history index (test_reader_history's docstring): five documents
    published in r1 (r2 created, empty). Returns the model id."""
    with database.connect(url) as admin:
        model_id = _store.models.register_model(admin, embedder.identity.to_dict())
    with database.connect_as(url, _roles.WRITER) as writer:
        for run_id in ("r1", "r2"):
            _store.runs.create_run(writer, run_id, ["docs"], model_id)
        for uri, text in ACL_TEXTS.items():
            stage_text(writer, embedder, model_id, "r1", uri, text, ACL_FIRST_GROUPS[uri])
        _store.versions.publish(writer, "r1")
        _store.runs.update_run(writer, "r1", status="published", finished=True)
    return model_id


def acl_second_run(url: str, embedder: Any, model_id: int) -> None:
    """r2: keep/1 edited (same groups), revoke/1 moved to {c}, delete/1 deleted, narrow/1 to {b},
    widen/1 to {a, b}; staged, not published."""
    with database.connect_as(url, _roles.WRITER) as writer:
        stage_text(writer, embedder, model_id, "r2", "keep/1", ACL_TEXTS["keep/1"] + " Also in September.", ["a"])
        assert _store.versions.stage_acl_version(writer, "r2", "docs", "revoke/1", ["c"])
        assert _store.versions.stage_tombstone(writer, "r2", "docs", "delete/1")
        assert _store.versions.stage_acl_version(writer, "r2", "docs", "narrow/1", ["b"])
        assert _store.versions.stage_acl_version(writer, "r2", "docs", "widen/1", ["a", "b"])


def bench_module(name: str) -> Any:
    """A module of bench/ (its corpus generators and shapes), which is not a package: the tests
    check the same inputs the benchmarks time."""
    import importlib.util

    from rag_pipeline_tests.conftest import PROJECT_ROOT

    spec = importlib.util.spec_from_file_location(name, PROJECT_ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pathological_markdown() -> bytes:
    """A small file that needs minutes of parser CPU, for the time limits: a loose list item
    opening with a heading, then 50,000 lines of text each followed by a link definition (450
    KB; 8,000 of them take 26 s). python-markdown detabs what follows a heading there and hands it
    back as one block, which each definition splits again; markdown_blocks.py leaves that block
    whole, since the detab changes what it holds. (Indented code between rules served before,
    setext headings and a list nested 1,500 levels before that; all parse quickly now.)"""
    return b"- a\n\n- # h\n" + b"t\n[r]: u\n" * 50_000


def html_mail(subject: str, plain: str, html: str) -> bytes:
    """An e-mail with a plain-text body and an HTML alternative, as mail clients send it."""
    from email.message import EmailMessage

    message = EmailMessage()
    message["Subject"] = subject
    message.set_content(plain)
    message.add_alternative(html, subtype="html")
    return message.as_bytes()


def parsed_in_a_fresh_process(data: bytes, name: str) -> tuple[list[str], set[str]]:
    """The element kinds of `data` parsed by `parse_document` in a new Python process, and every
    module that process then holds: what parsing one such file makes a sync load."""
    import subprocess
    import sys

    from rag_pipeline_tests.conftest import PROJECT_ROOT

    probe = ("import json, sys; from rag_pipeline.parsing import parse_document; "
             f"d = parse_document({data!r}, {name!r}); print(json.dumps([[e.kind for e in d.elements], sorted(sys.modules)]))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=600)
    assert done.returncode == 0, done.stderr
    kinds, modules = json.loads(done.stdout.strip().splitlines()[-1])
    return kinds, set(modules)


def explained(conn: psycopg.Connection, run: Callable[[], object]) -> list[dict[str, Any]]:
    """The JSON plan (with actual counts) of every statement `run` executes on `conn`, from
    auto_explain at NOTICE level. auto_explain's settings are superuser-only, so `conn` must be
    a superuser's session: it takes the reader role itself, and gives it back afterwards."""
    plans: list[dict[str, Any]] = []

    def collect(diagnostic: psycopg.errors.Diagnostic) -> None:
        message = diagnostic.message_primary or ""
        if "plan:" in message:
            plans.append(json.loads(message[message.index("{"):]))

    conn.execute("LOAD 'auto_explain'")
    for name, value in (("log_min_duration", "0"), ("log_format", "json"), ("log_level", "notice"),
                        ("log_analyze", "on"), ("log_timing", "off")):
        conn.execute("SELECT set_config(%s, %s, false)", (f"auto_explain.{name}", value))
    conn.add_notice_handler(collect)
    try:
        conn.execute("SET ROLE rag_reader")
        run()
    finally:
        conn.execute("RESET ROLE")
        conn.execute("SELECT set_config('auto_explain.log_min_duration', '-1', false)")
        conn.remove_notice_handler(collect)
    return [p for p in plans if "rag_session_groups" not in p["Query Text"]]


def plan_nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from plan_nodes(child)
