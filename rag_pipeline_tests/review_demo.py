"""The review tests' world, built once per module: the demo corpus synced with one hostile
document added (sales only: `<script>`, HTML entities and a terminal escape in its text), three
searches, and answers recorded by the real `verify`: one flagged (a wrong figure), one verified,
one on the hostile document; and two reviewers, one of all-staff and one of sales."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

from conftest import DEMO_DIR, write_config
from helpers import query

from rag_pipeline import cli
from rag_pipeline.review.reviewers import add_reviewer
from rag_pipeline.store import database

POLICY = "policies/travel-policy.pdf"
HOSTILE = "sales/hostile.txt"
HOSTILE_TEXT = ("Discount notes\n\nThe partner discount is <script>alert('owned')</script> twelve percent "
                "&amp; applies to &lt;b&gt;all&lt;/b&gt; regions \x1b[31mRED\x1b[0m until further notice.\n")
PASSWORD = "correct horse battery"


@dataclass
class ReviewDemo:
    config: Path
    url: str
    flagged: int      # answer ids
    verified: int
    hostile: int
    unsupported_claim: str


def build(root: Path, url: str) -> ReviewDemo:
    shutil.copytree(DEMO_DIR / "docs", root / "docs")
    (root / "docs" / HOSTILE).write_text(HOSTILE_TEXT, encoding="utf-8")
    config = write_config(root, url, docs=root / "docs")
    _cli("sync", "--config", str(config))
    travel = _search(config, "Who approves a business trip abroad and what is the hotel cap in Berlin?", "all-staff")
    approval, rates = _chunk(url, POLICY, "head of department"), _chunk(url, POLICY, "| Berlin |")
    wrong = "Hotels in Berlin are paid up to EUR 195 a night."
    flagged = _verify(root, config, {"log_id": travel, "claims": [
        {"text": "A business trip abroad must be approved in advance by the head of department.",
         "citations": [{"chunk_id": approval, "quote": "approved in advance by the head of department"}]},
        {"text": wrong, "citations": [{"chunk_id": rates}]}]})
    assert flagged["verdict"] == "flagged", flagged
    verified = _verify(root, config, {"log_id": travel, "claims": [
        {"text": "A business trip abroad must be approved in advance by the head of department.",
         "citations": [{"chunk_id": approval}]}]})
    assert verified["verdict"] == "verified", verified
    discount = _search(config, "What is the partner discount?", "sales")
    hostile_chunk = _chunk(url, HOSTILE, "partner discount")
    hostile = _verify(root, config, {"log_id": discount, "claims": [
        {"text": "The partner discount is <b>40 percent</b> \x1b[2J everywhere.", "citations": [{"chunk_id": hostile_chunk}]}]})
    assert hostile["verdict"] in ("flagged", "rejected"), hostile
    with database.connect(url) as conn:
        add_reviewer(conn, "rita", ["all-staff"], PASSWORD)
        add_reviewer(conn, "sam", ["sales", "all-staff"], PASSWORD)
    return ReviewDemo(config, url, flagged["answer_id"], verified["answer_id"], hostile["answer_id"], wrong)


def _cli(*args: str) -> dict:
    """Run the real CLI with --json; its output parsed (pytest's capture left alone)."""
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli.main([*args, "--json"])
    assert code == 0, out.getvalue()[-2000:]
    return json.loads(out.getvalue().strip().splitlines()[-1])


def _search(config: Path, question: str, groups: str) -> int:
    return _cli("search", question, "--groups", groups, "-k", "8", "--user", "alice@example.com",
                "--config", str(config))["log_id"]


def _chunk(url: str, uri: str, phrase: str) -> int:
    found = query(url, "SELECT c.id FROM chunks c JOIN document_versions v ON v.id = c.version_id"
                       " JOIN documents d ON d.id = v.document_id WHERE d.uri = %s AND v.status = 'live'"
                       " AND c.text LIKE %s ORDER BY c.id", uri, f"%{phrase}%")
    assert found, (uri, phrase)
    return found[0][0]


def _verify(root: Path, config: Path, answer: dict) -> dict:
    path = root / f"answer-{len(list(root.glob('answer-*')))}.json"
    path.write_text(json.dumps(answer), encoding="utf-8")
    return _cli("verify", str(path), "--user", "alice@example.com", "--config", str(config))


@contextmanager
def serving(url: str, **options) -> Iterator[str]:
    """The review screen served by uvicorn on a free loopback port in a thread; its base URL."""
    import socket
    import threading
    import time

    import uvicorn

    from rag_pipeline.web.app import create_app

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(url, **options), host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the review screen did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)
