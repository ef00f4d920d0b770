"""The review core on real answers recorded by `verify` (review_demo): the queue and its filters,
one answer's four parts, decisions appended (latest in force), a correction verified again, the
reviewers' groups, and the append-only record (triggers, grants) of migration 020."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from conftest import cli_database
from helpers import query
from review_demo import HOSTILE, PASSWORD, POLICY, ReviewDemo, build

from rag_pipeline.errors import UsageError
from rag_pipeline.review import decide, queue, record, reviewers
from rag_pipeline.review.errors import NotFoundError, SignInError
from rag_pipeline.review.passwords import check_password, hash_password
from rag_pipeline.store import database


@pytest.fixture(scope="module")
def world(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReviewDemo]:
    with cli_database(pg_server_url) as url:
        yield build(tmp_path_factory.mktemp("review"), url)


def _ids(conn, **filters) -> list[int]:
    return [r["answer_id"] for r in queue.page(conn, queue.queue_filter(**filters)).rows]


def test_the_queue_holds_flagged_and_rejected_answers_newest_first_and_filters(world: ReviewDemo) -> None:
    with database.connect(world.url) as conn:
        assert _ids(conn) == [world.hostile, world.flagged]
        assert _ids(conn, status="verified") == [world.verified]
        assert _ids(conn, status="all") == [world.hostile, world.verified, world.flagged]
        assert _ids(conn, source="larkspur") == [world.hostile, world.flagged]
        assert _ids(conn, source="no-such-source") == []
        policy = query(world.url, "SELECT id FROM documents WHERE uri = %s", POLICY)[0][0]
        assert _ids(conn, document=str(policy)) == [world.flagged]
        assert _ids(conn, document=str(policy), source="other") == []
        assert _ids(conn, since="2999-01-01") == [] and _ids(conn, until="2999-01-01") == [world.hostile, world.flagged]
        # keyset paging: one per page, the cursor continues where the last page stopped
        first = queue.page(conn, queue.queue_filter(limit=1))
        assert [r["answer_id"] for r in first.rows] == [world.hostile] and first.next_cursor
        second = queue.page(conn, queue.queue_filter(limit="1", cursor=first.next_cursor))
        assert [r["answer_id"] for r in second.rows] == [world.flagged] and second.next_cursor is None
        # a reviewer's groups: all-staff does not see the answer on the sales document
        assert _ids(conn, groups=("all-staff",)) == [world.flagged]
        for bad in ({"status": "nope"}, {"document": "1; DROP TABLE answers"}, {"since": "yesterday"},
                    {"cursor": "x.y"}, {"limit": "0"}, {"limit": "100000"}):
            with pytest.raises(UsageError):
                queue.queue_filter(**bad)


def test_one_answer_in_four_parts(world: ReviewDemo) -> None:
    with database.connect(world.url) as conn:
        shown = record.load(conn, world.flagged, ("all-staff",))
    assert shown.question.startswith("Who approves a business trip abroad") and shown.caller == "alice@example.com"
    assert shown.verdict == "flagged" and shown.state == "open" and shown.search_groups == ["all-staff"]
    assert [c["status"] for c in shown.claims] == ["supported", "unsupported"]
    wrong = shown.claims[1]["citations"][0]
    assert wrong["status"] == "unsupported" and "195" in wrong["reason"]
    cited = shown.passage(wrong["chunk_id"])
    assert cited is not None and cited.uri == POLICY and cited.version_no == 1 and cited.rank is not None
    assert cited.section_path and cited.pages[0] >= 1 and cited.status == "live" and "valid" in cited.validity()
    assert cited.cited_by == [2] and all(p.rank for p in shown.passages[:3])
    assert shown.draft["claims"][1]["text"] == world.unsupported_claim
    quote = shown.claims[0]["citations"][0]["quote"]
    span = record.quoted_span(shown.passage(shown.claims[0]["citations"][0]["chunk_id"]).text, quote)
    assert span is not None
    assert record.quoted_span("a  B\nc", "A b C") == (0, 6) and record.quoted_span("abc", "zzz") is None
    assert "[chunk " in decide.draft_text(shown)


def test_a_reviewer_without_the_groups_gets_not_found(world: ReviewDemo) -> None:
    with database.connect(world.url) as conn:
        with pytest.raises(NotFoundError):
            record.load(conn, world.hostile, ("all-staff",))
        with pytest.raises(NotFoundError):
            record.load(conn, 10**15, None)
        with pytest.raises(NotFoundError):
            decide.decide(conn, world.hostile, "approve", reviewer="rita", groups=("all-staff",))
        assert record.load(conn, world.hostile, ("sales",)).passages[0].uri == HOSTILE


def test_decisions_are_appended_and_the_latest_is_in_force(world: ReviewDemo, embedder) -> None:
    with database.connect(world.url) as conn:
        decide.decide(conn, world.flagged, "reject", reviewer="rita", groups=("all-staff",), comment="wrong figure")
        assert world.flagged not in _ids(conn) and _ids(conn, status="reject") == [world.flagged]
        shown = record.load(conn, world.flagged, ("all-staff",))
        fixed = decide.draft_text(shown).replace("EUR 195", "EUR 140")
        done = decide.decide(conn, world.flagged, "correct", reviewer="rita", groups=("all-staff",),
                             correction=fixed.encode(), embedder=embedder)
        assert done["corrected_verdict"] == "verified", done
        decide.decide(conn, world.flagged, "approve", reviewer="rita", groups=("all-staff",))
        history = record.load(conn, world.flagged, ("all-staff",)).decisions
        assert [d["decision"] for d in history] == ["reject", "correct", "approve"]
        assert history[0]["comment"] == "wrong figure" and history[1]["corrected"]["claims"][1]["text"].endswith("140 a night.")
        assert _ids(conn, status="approve") == [world.flagged] and _ids(conn, status="correct") == []
        # a correction citing a passage the search did not return is on record with that verdict
        bad = b'{"log_id": %d, "claims": [{"text": "Hotels in Berlin cost EUR 140.", "citations": [{"chunk_id": 1}]}]}' % shown.search_id
        with pytest.raises(UsageError):  # the answer names another search
            decide.decide(conn, world.flagged, "correct", reviewer="rita", groups=None,
                          correction=b'{"log_id": 999999, "text": "x"}', embedder=embedder)
        recorded = decide.decide(conn, world.flagged, "correct", reviewer="rita", groups=None, correction=bad, embedder=embedder)
        assert recorded["corrected_verdict"] == "rejected"
        for wrong in ({"decision": "maybe"}, {"decision": "approve", "comment": "x" * 5000},
                      {"decision": "correct"}, {"decision": "approve", "correction": b"x"}):
            with pytest.raises(UsageError):
                decide.decide(conn, world.flagged, reviewer="rita", groups=None, **wrong)
        conn.execute("SET ROLE rag_writer")
        for statement in ("UPDATE review_decisions SET decision = 'approve'", "DELETE FROM review_decisions",
                          "UPDATE review_queue SET state = 'open'", "DELETE FROM review_views"):
            with pytest.raises(psycopg.Error):
                conn.execute(statement)
            conn.rollback()
            conn.execute("SET ROLE rag_writer")
        conn.execute("RESET ROLE")
    assert query(world.url, "SELECT count(*) FROM review_decisions WHERE answer_id = %s", world.flagged)[0][0] == 4


def test_reviewers_sign_in_with_a_password_hash(world: ReviewDemo) -> None:
    stored = hash_password("a long enough secret")
    assert stored.startswith("scrypt$") and "a long enough secret" not in stored
    assert check_password("a long enough secret", stored) and not check_password("wrong secret!", stored)
    assert not check_password("x", None) and not check_password("x", "scrypt$garbage")
    with pytest.raises(UsageError):
        hash_password("short")
    with database.connect(world.url) as conn:
        assert reviewers.sign_in(conn, "rita", PASSWORD).groups == ("all-staff",)
        for name, password in (("rita", "wrong password"), ("nobody", PASSWORD), ("", "")):
            with pytest.raises(SignInError):
                reviewers.sign_in(conn, name, password)
        with pytest.raises(UsageError):
            reviewers.add_reviewer(conn, "eve", ["bad,group"], PASSWORD)
        with pytest.raises(UsageError):
            reviewers.add_reviewer(conn, "eve", [], PASSWORD)
        assert query(world.url, "SELECT password_hash LIKE 'scrypt$%%' FROM reviewers WHERE name = 'rita'")[0][0]
