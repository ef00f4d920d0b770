"""The review screen over HTTP: uvicorn on loopback against the real database and answers the
real `verify` recorded (review_demo). Sign-in, the queue, one answer's four parts, the cited
passage with its quote marked, decisions leaving the queue with their full history, CSRF on
every form, hostile document and answer text rendered as text, 404 for answers of documents the
reviewer's groups may not read, every answer page view logged, and the proxy-header sign-in."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from conftest import cli_database
from helpers import query
from review_demo import HOSTILE, PASSWORD, POLICY, ReviewDemo, build, serving


@pytest.fixture(scope="module")
def world(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReviewDemo]:
    with cli_database(pg_server_url) as url:
        yield build(tmp_path_factory.mktemp("screen"), url)


@pytest.fixture(scope="module")
def base(world: ReviewDemo) -> Iterator[str]:
    with serving(world.url) as address:
        yield address


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, page[:500]
    return found.group(1)


@contextmanager
def _signed_in(base: str, name: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, follow_redirects=False, timeout=60) as client:
        token = _csrf(client.get("/login").text)
        done = client.post("/login", data={"name": name, "password": PASSWORD, "csrf": token})
        assert done.status_code == 303 and done.headers["location"] == "/", done.text[:500]
        yield client


def test_sign_in_is_required_and_checks_the_password(base: str) -> None:
    with httpx.Client(base_url=base, follow_redirects=False, timeout=60) as client:
        first = client.get("/answers/1")
        assert first.status_code == 303 and first.headers["location"].startswith("/login?next=%2Fanswers%2F1")
        token = _csrf(client.get("/login").text)
        wrong = client.post("/login", data={"name": "rita", "password": "not the password", "csrf": token})
        assert wrong.status_code == 401 and "unknown reviewer or wrong password" in wrong.text
        assert client.get("/").status_code == 303
        forged = client.post("/login", data={"name": "rita", "password": PASSWORD})  # no CSRF token
        assert forged.status_code == 403 and client.get("/").status_code == 303
        page = client.get("/login")
        assert "default-src 'none'" in page.headers["content-security-policy"] and page.headers["x-frame-options"] == "DENY"
        assert client.get("/static/htmx.min.js").status_code == 200


def test_the_queue_and_one_answer_in_four_parts(world: ReviewDemo, base: str) -> None:
    with _signed_in(base, "rita") as client:
        queue = client.get("/")
        assert queue.status_code == 200
        assert f'id="answer-row-{world.flagged}"' in queue.text and f'id="answer-row-{world.hostile}"' not in queue.text
        assert f'id="answer-row-{world.verified}"' not in queue.text  # verified: not in the open queue
        assert f'id="answer-row-{world.verified}"' in client.get("/", params={"status": "verified"}).text
        assert "Nothing to review" in client.get("/", params={"source": "elsewhere"}).text
        assert client.get("/", params={"status": "bogus"}).status_code == 400
        views = query(world.url, "SELECT count(*) FROM review_views WHERE answer_id = %s", world.flagged)[0][0]
        page = client.get(f"/answers/{world.flagged}")
        assert page.status_code == 200
        text = page.text
        assert "Who approves a business trip abroad" in text and "alice@example.com" in text
        unsupported = re.search(r'<li class="claim claim-unsupported" id="claim-2">(.*?)</li>\s*</ul>', text, re.S)
        assert unsupported and html.escape(world.unsupported_claim, quote=False) in unsupported.group(1)
        assert "does not state the claim" in unsupported.group(1) and "195" in unsupported.group(1)
        assert 'class="claim claim-supported" id="claim-1"' in text
        assert POLICY in text and "version 1" in text and "pages" in text and "live, valid" in text
        after = query(world.url, "SELECT count(*), max(reviewer) FROM review_views WHERE answer_id = %s", world.flagged)[0]
        assert after == (views + 1, "rita")
        # the citation's passage, its quote marked (the HTMX partial)
        cited = client.get(f"/answers/{world.flagged}/citations/1/1", headers={"HX-Request": "true"})
        assert cited.status_code == 200 and '<mark id="quoted">' in cited.text
        marked = re.search(r'<mark id="quoted">(.*?)</mark>', cited.text, re.S).group(1)
        assert " ".join(marked.split()).lower() == "approved in advance by the head of department"
        assert client.get(f"/answers/{world.flagged}/citations/9/1").status_code == 404
        # a document's history links to its versions' chunks
        document = re.search(r'href="/documents/(\d+)">larkspur/' + re.escape(POLICY), text).group(1)
        history = client.get(f"/documents/{document}")
        assert history.status_code == 200 and "version 1" in history.text
        version = re.search(r'href="/versions/(\d+)"', history.text).group(1)
        chunks = client.get(f"/versions/{version}")
        assert chunks.status_code == 200 and "head of department" in chunks.text


def test_hostile_text_renders_as_text(world: ReviewDemo, base: str) -> None:
    with _signed_in(base, "sam") as client:
        page = client.get(f"/answers/{world.hostile}")
        assert page.status_code == 200
        body = page.text
        stored = query(world.url, "SELECT c.text FROM chunks c JOIN document_versions v ON v.id = c.version_id"
                                  " JOIN documents d ON d.id = v.document_id WHERE d.uri = %s", HOSTILE)[0][0]
        assert "<script>" in stored and "&amp;" in stored, stored  # the document's text reached the index as written
        assert "<script>alert" not in body and "&lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt;" in body
        assert "&amp;amp;" in body and "&amp;lt;b&amp;gt;all&amp;lt;/b&amp;gt;" in body  # entities shown as typed
        assert "\x1b" not in body and "\\x1b[2J" in body  # the claim's terminal escape, visible
        assert "<b>40 percent</b>" not in body and "&lt;b&gt;40 percent&lt;/b&gt;" in body
        if "\x1b" in stored:
            assert "\\x1b[31mRED" in body
        cited = client.get(f"/answers/{world.hostile}/citations/1/1")
        assert "<script>" not in cited.text and "&lt;script&gt;" in cited.text


def test_a_reviewer_without_the_groups_gets_404(world: ReviewDemo, base: str) -> None:
    hostile_document = query(world.url, "SELECT id FROM documents WHERE uri = %s", HOSTILE)[0][0]
    hostile_version = query(world.url, "SELECT id FROM document_versions WHERE document_id = %s", hostile_document)[0][0]
    with _signed_in(base, "rita") as client:
        token = _csrf(client.get("/").text)
        for path in (f"/answers/{world.hostile}", f"/answers/{world.hostile}/citations/1/1",
                     f"/documents/{hostile_document}", f"/versions/{hostile_version}", "/answers/999999999"):
            assert client.get(path).status_code == 404, path
        denied = client.post(f"/answers/{world.hostile}/decide", data={"decision": "approve", "csrf": token})
        assert denied.status_code == 404
        assert "partner discount" not in client.get("/", params={"status": "all"}).text
    assert query(world.url, "SELECT count(*) FROM review_decisions WHERE answer_id = %s", world.hostile)[0][0] == 0
    assert query(world.url, "SELECT count(*) FROM review_views WHERE answer_id = %s AND reviewer = 'rita'",
                 world.hostile)[0][0] == 0


def test_decisions_need_the_csrf_token_leave_the_queue_and_keep_their_history(world: ReviewDemo, base: str) -> None:
    with _signed_in(base, "rita") as client:
        token = _csrf(client.get(f"/answers/{world.flagged}").text)
        for forged in ({"decision": "approve"}, {"decision": "approve", "csrf": "forged"}):
            assert client.post(f"/answers/{world.flagged}/decide", data=forged).status_code == 403
        # a cross-site form post carries no session cookie at all
        with httpx.Client(base_url=base, timeout=60) as stranger:
            assert stranger.post(f"/answers/{world.flagged}/decide", data={"decision": "approve"}).status_code in (303, 403)
        assert query(world.url, "SELECT count(*) FROM review_decisions WHERE answer_id = %s", world.flagged)[0][0] == 0
        bad = client.post(f"/answers/{world.flagged}/decide", data={"decision": "maybe", "csrf": token})
        assert bad.status_code == 400
        rejected = client.post(f"/answers/{world.flagged}/decide",
                               data={"decision": "reject", "comment": "<i>wrong</i> figure", "csrf": token})
        assert rejected.status_code == 303 and rejected.headers["location"] == f"/?decided={world.flagged}"
        assert f'id="answer-row-{world.flagged}"' not in client.get("/").text
        assert f'id="answer-row-{world.flagged}"' in client.get("/", params={"status": "reject"}).text
        approved = client.post(f"/answers/{world.flagged}/decide", data={"decision": "approve", "csrf": token})
        assert approved.status_code == 303
        assert f'id="answer-row-{world.flagged}"' in client.get("/", params={"status": "approve"}).text
        history = client.get(f"/answers/{world.flagged}").text
        table = re.search(r'<table class="history" id="history">(.*?)</table>', history, re.S).group(1)
        assert table.count("<tr>") == 3 and "reject" in table and "approve" in table  # header + both decisions
        assert "&lt;i&gt;wrong&lt;/i&gt; figure" in table
        out = client.post("/logout", data={"csrf": token})
        assert out.status_code == 303 and client.get("/").status_code == 303
    rows = query(world.url, "SELECT decision, reviewer FROM review_decisions WHERE answer_id = %s ORDER BY id", world.flagged)
    assert rows == [("reject", "rita"), ("approve", "rita")]


def test_the_reverse_proxy_header_signs_in_when_configured(world: ReviewDemo) -> None:
    with serving(world.url, proxy_header="X-Forwarded-User") as address, httpx.Client(base_url=address, timeout=60) as client:
        assert client.get("/").status_code == 403
        assert client.get("/", headers={"X-Forwarded-User": "mallory"}).status_code == 403
        page = client.get("/", headers={"X-Forwarded-User": "sam"})
        assert page.status_code == 200 and 'id="reviewer-name">sam<' in page.text
        assert client.get(f"/answers/{world.hostile}", headers={"X-Forwarded-User": "rita"}).status_code == 404
