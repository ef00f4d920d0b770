"""Access changes and removals always take effect: content that cannot be parsed never holds
back a revocation or a tombstone, files that fail on every run do not count against
max_failed_share again and again, and an unreadable file is quarantined, never "gone"."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pymupdf
import pytest
from conftest import PROJECT_ROOT, write_config
from helpers import query, search, sync, versions


def _pdf(text: str) -> bytes:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), text, fontsize=11)
    return doc.tobytes()


@pytest.fixture
def docs() -> Iterator[Path]:
    """A small source, world-readable (a test below lists it as the unprivileged user)."""
    root = Path(tempfile.mkdtemp(prefix="rag-access-"))
    root.chmod(0o755)
    folder = root / "docs"
    folder.mkdir()
    (folder / "_access.yaml").write_text("groups: [all-staff]\n")
    (folder / "canteen.md").write_text("# Canteen\n\nThe canteen serves lentil soup on Thursdays.\n")
    (folder / "parking.md").write_text("# Parking\n\nVisitor parking is behind the warehouse in row K.\n")
    (folder / "bikes.md").write_text("# Bikes\n\nBicycles are stored in the basement cage near lift two.\n")
    (folder / "board-report.pdf").write_bytes(_pdf("The board approved the acquisition of Marlowe Tooling."))
    for path in [root, folder, *folder.iterdir()]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    try:
        yield folder
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def config(tmp_path: Path, db_url: str, docs: Path, monkeypatch) -> Path:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    return write_config(tmp_path, db_url, docs=docs, extra="max_failed_share: 0.5\nlimits: {max_seconds: 60, ocr: false}\n")


@contextmanager
def _tcp_url(db_url: str) -> Iterator[str]:
    """The database reachable over loopback TCP: the embedded server listens on a socket in its
    private data folder only, which an unprivileged process cannot open. A byte-for-byte relay,
    so the server still sees a real client."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    params = conninfo_to_dict(db_url)
    if not str(params.get("host", "")).startswith("/"):
        yield db_url
        return
    path = f"{params['host']}/.s.PGSQL.{params.get('port', 5432)}"
    listener = socket.create_server(("127.0.0.1", 0))

    def pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            dst.close()

    def serve() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX)
            upstream.connect(path)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=pump, args=(a, b), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield make_conninfo(**{**params, "host": "127.0.0.1", "port": str(listener.getsockname()[1])})
    finally:
        listener.close()


def _uris(capsys, config: Path, query_text: str, groups: str) -> list[str]:
    return [hit["uri"] for hit in search(capsys, config, query_text, groups, "-k", "3")]


def test_a_revocation_takes_effect_even_when_the_new_content_cannot_be_parsed(capsys, config: Path, docs: Path, db_url: str) -> None:
    assert sync(capsys, config)[0] == 0
    question = "Which acquisition did the board approve?"
    assert "board-report.pdf" in _uris(capsys, config, question, "all-staff")
    (docs / "_access.yaml").write_text("groups: [all-staff]\nfiles:\n  board-report.pdf: [board]\n")
    (docs / "board-report.pdf").write_bytes(b"%PDF-1.7\n" + b"\x00broken" * 200)
    code, out = sync(capsys, config)
    assert code == 0, out
    assert [q["uri"] for q in out["quarantined"]] == ["board-report.pdf"]
    assert "board-report.pdf" not in _uris(capsys, config, question, "all-staff")
    assert "board-report.pdf" in _uris(capsys, config, question, "board")
    assert [(v[0], v[2], v[3]) for v in versions(db_url, "board-report.pdf")] == [
        (1, "superseded", ["all-staff"]), (2, "live", ["board"])]
    code, out = sync(capsys, config)  # the broken file again: not a new failure, nothing to widen
    assert code == 0, out
    assert "board-report.pdf" not in _uris(capsys, config, question, "all-staff")


def test_files_broken_on_every_run_do_not_block_later_syncs_and_failing_content_never_holds_back_removals(
        capsys, config: Path, docs: Path, db_url: str) -> None:
    assert sync(capsys, config)[0] == 0
    (docs / "data.xyz").write_bytes(b"an unsupported type")
    (docs / "broken.pdf").write_bytes(b"not a pdf")
    code, out = sync(capsys, config)
    assert code == 1 and "max_failed_share" in out["error"]  # two NEW failures out of two
    code, out = sync(capsys, config)  # the same two files, unchanged: known failures
    assert code == 0, out
    assert {q["uri"] for q in out["quarantined"]} == {"data.xyz", "broken.pdf"}
    # one removal, one revocation, and three new broken files in the same run
    (docs / "canteen.md").unlink()
    (docs / "_access.yaml").write_text("groups: [all-staff]\nfiles:\n  parking.md: [facilities]\n")
    for i in range(3):
        (docs / f"new-broken-{i}.pdf").write_bytes(b"not a pdf either")
    (docs / "fresh.md").write_text("# Fresh\n\nThe fresh notice about the summer party on the roof.\n")
    code, out = sync(capsys, config)
    assert code == 1 and "max_failed_share" in out["error"] and "removals are published" in out["error"]
    assert out["counts"]["published"]["tombstoned"] == 1
    assert [v[2] for v in versions(db_url, "canteen.md")] == ["superseded", "tombstoned"]
    assert versions(db_url, "parking.md")[-1][2:] == ("live", ["facilities"])
    assert "parking.md" not in _uris(capsys, config, "Where is visitor parking?", "all-staff")
    assert versions(db_url, "fresh.md") == []  # new content was held back, not half-published
    assert query(db_url, "SELECT count(*) FROM document_versions WHERE status = 'staged'") == [(0,)]


def test_an_unreadable_file_is_quarantined_and_never_tombstoned(capsys, config: Path, docs: Path, db_url: str) -> None:
    """The listing runs as the unprivileged user `nobody`, for whom chmod 000 really means
    unreadable (root reads anything)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run the listing as the unprivileged user 'nobody'")
    assert sync(capsys, config)[0] == 0
    (docs / "bikes.md").chmod(0o000)
    state = Path(tempfile.mkdtemp(prefix="rag-blobs-"))
    state.chmod(0o777)
    readable_config = state / "rag_pipeline.yaml"  # the test's own tmp_path is closed to others
    shutil.copy(config, readable_config)
    readable_config.chmod(0o644)
    script = (
        "import sys\n"
        "from rag_pipeline import store\n"
        "from rag_pipeline.config import load_config\n"
        "from rag_pipeline.sync.context import SyncContext\n"
        "from rag_pipeline.sync.plan import plan_run\n"
        "config = load_config(sys.argv[1])\n"
        "object.__setattr__(config, 'state_dir', __import__('pathlib').Path(sys.argv[3]))\n"
        "ctx = SyncContext(config=config, db_url=sys.argv[2], run_id='as-nobody')\n"
        "with ctx.connect() as conn:\n"
        "    model_id = conn.execute('SELECT id FROM embedding_models').fetchone()[0]\n"
        "print(dict(plan_run(ctx, model_id).counts))\n"
    )
    try:
        with _tcp_url(db_url) as url:
            result = subprocess.run(
                ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", sys.executable, "-c", script,
                 str(readable_config), url, str(state)],
                env={"PATH": os.environ["PATH"], "PYTHONPATH": str(PROJECT_ROOT), "HOME": str(state)},
                capture_output=True, text=True, timeout=600,
            )
    finally:
        (docs / "bikes.md").chmod(0o644)
        shutil.rmtree(state, ignore_errors=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "'gone'" not in result.stdout or "'gone': 0" in result.stdout, result.stdout
    assert query(db_url, "SELECT action FROM run_items WHERE run_id = 'as-nobody' AND uri = 'bikes.md'") == []
    quarantined = query(db_url, "SELECT stage, error FROM quarantine WHERE run_id = 'as-nobody'")
    assert [(stage, "bikes.md" in error and "Permission denied" in error) for stage, error in quarantined] == [("list", True)]
