"""A search costs three round trips to PostgreSQL, whatever its mode, as counted by libpq's own
protocol trace (every message the client sends and receives): the transaction, the caller's
groups and the statement preparing the search; the search statement; the log row and the commit.
A batch repeats exactly that per query, its statements parsed once per connection."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator

import pytest
from conftest import fresh_database

from rag_pipeline import store
from rag_pipeline.retrieval import search as retrieval
from rag_pipeline.store import database, roles

TEXTS = [
    "Hotels in Berlin are reimbursed up to EUR 165 per night for business travel.",
    "Travel requests must be submitted ten working days before departure.",
    "The retention period for invoices is ten years from the end of the fiscal year.",
    "Laptops are encrypted with full-disk encryption before they are handed out.",
]


@pytest.fixture(scope="module")
def index(pg_server_url: str, embedder) -> Iterator[str]:
    with fresh_database(pg_server_url) as url, database.connect(url) as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
        store.runs.create_run(conn, "r1", ["docs"], model_id)
        for n, text in enumerate(TEXTS * 5):
            chunk = {"ord": 0, "section_path": ["Policy"], "char_start": 0, "char_end": len(text),
                     "token_count": len(text.split()), "content_hash": f"h{n}", "text": text, "search_text": text}
            fields = {"checksum": f"c{n}", "acl_groups": ["staff" if n % 2 else "finance"], "model_id": model_id,
                      "language": "en"}
            store.versions.stage_content_version(conn, "r1", "docs", f"doc-{n}", fields, [chunk],
                                                 embedder.encode([text]))
        store.versions.publish(conn, "r1")
        yield url


def round_trips(conn, run: Callable[[], object]) -> int:
    """How many times the client sent messages and then waited for the server's: one round
    trip per burst of frontend messages in libpq's trace."""
    from psycopg import pq

    with tempfile.TemporaryFile("w+") as trace:
        conn.pgconn.trace(trace.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            run()
        finally:
            conn.pgconn.untrace()
        trace.seek(0)
        # a message's first line starts with its direction; a statement's own newlines continue it
        directions = [d for d in (line.split("\t", 1)[0] for line in trace.read().splitlines()) if d in ("F", "B")]
    return sum(1 for i, d in enumerate(directions) if d == "F" and (i == 0 or directions[i - 1] != "F"))


@pytest.mark.parametrize("mode", retrieval.MODES)
def test_a_search_is_three_round_trips_in_every_mode(index: str, embedder, mode: str) -> None:
    with database.connect_as(index, roles.READER) as conn:
        retrieval.search(conn, embedder, "warm up", ["staff"], mode=mode)  # pgvector types, prepared statements
        found: list = []
        trips = round_trips(conn, lambda: found.append(retrieval.search(
            conn, embedder, "hotel costs in Berlin per night", ["staff", "finance"], k=3, mode=mode)))
        hits = found[0]
        assert hits and "Berlin" in hits[0].text  # the search did its work in those three
        assert trips == 3
    with database.connect(index) as conn:  # the log is the operator's to read, not the reader's
        logged = store.search_log.logged_search(conn, hits.log_id)
        assert logged is not None and [r["chunk_id"] for r in logged["results"]] == [h.chunk_id for h in hits]
        if mode != "vector":
            assert logged["strategy"]["fulltext"]["tries"] == 1


@pytest.mark.parametrize("mode", ["hybrid", "hybrid+rerank"])
def test_a_search_naming_a_section_is_still_three_round_trips(index: str, embedder, mode: str) -> None:
    """The structural branch of a question naming "§ 12" or "section 7.2.1" (store/search_sections.py)
    runs inside the search statement: no round trip of its own."""
    with database.connect_as(index, roles.READER) as conn:
        retrieval.search(conn, embedder, "warm up § 1", ["staff"], mode=mode)
        found: list = []
        trips = round_trips(conn, lambda: found.append(retrieval.search(
            conn, embedder, "hotel costs in Berlin under § 12 and section 7.2.1", ["staff", "finance"], k=3, mode=mode)))
    assert found[0] and trips == 3


def test_an_unlogged_search_with_nothing_visible_is_still_at_most_three(index: str, embedder) -> None:
    with database.connect_as(index, roles.READER) as conn:
        found: list = []
        trips = round_trips(conn, lambda: found.append(retrieval.search(conn, embedder, "hotel", ["nobody"], log=False)))
    assert found[0] == [] and found[0].log_id is None and trips <= 3


def test_the_refusal_calibration_comes_with_the_search(index: str, embedder) -> None:
    """The threshold in force is read by the search's first statement: deciding refusal costs
    no round trip of its own, and a calibration saved later is seen by the next search."""
    with database.connect(index) as conn:
        model_id = store.search.index_model_id(conn)
        before = retrieval.search(conn, embedder, "hotel", ["staff"], log=False)
        assert before.calibration is None and before.model_id == model_id
        store.refusal.save_calibration(conn, {
            "model_id": model_id, "mode": retrieval.DEFAULT_MODE, "threshold": 0.42, "coverage_weight": 0.5,
            "eval_set": "test", "eval_set_sha256": "0" * 64, "must_answer": 8, "must_refuse": 2,
            "answer_accuracy": 1.0, "refuse_accuracy": 1.0})
        after = retrieval.search(conn, embedder, "hotel", ["staff"], log=False)
    from rag_pipeline.retrieval.refusal import threshold_from

    assert after.calibration["threshold"] == 0.42
    assert threshold_from(after.calibration, 0.3).value == 0.42 and "from test" in threshold_from(after.calibration, 0.3).source


def test_a_batch_repeats_three_round_trips_per_query(index: str, embedder) -> None:
    queries = ["hotel costs in Berlin", "how long are invoices kept", "encryption of laptops", "travel request deadline"]
    with database.connect_as(index, roles.READER) as conn:
        retrieval.search(conn, embedder, "warm up", ["staff"])
        trips = [round_trips(conn, lambda q=q: retrieval.search(conn, embedder, q, ["staff", "finance"])) for q in queries]
        prepared = conn.execute("SELECT count(*) FROM pg_prepared_statements").fetchone()[0]
    assert trips == [3] * len(queries)
    assert prepared >= 2  # the preparing statement and the search, parsed once for the whole batch


def test_a_search_that_fails_inside_its_pipeline_writes_nothing_and_leaves_the_connection_usable(
        index: str, embedder) -> None:
    """The model check fails after the first round trip (the search log id is already drawn, the
    groups set): the transaction rolls back, no log row is written, the groups do not outlive it,
    and the same connection searches again."""
    from types import SimpleNamespace

    from rag_pipeline.embedding import ModelError

    other = SimpleNamespace(identity=SimpleNamespace(weights_sha256="f" * 64, numerics="fp32", name="another model"),
                            encode=embedder.encode)
    with database.connect(index) as conn:
        before = conn.execute("SELECT count(*) FROM search_log").fetchone()[0]
        with pytest.raises(ModelError, match="another model"):
            retrieval.search(conn, other, "hotel costs in Berlin", ["staff", "finance"])
        assert conn.info.transaction_status == conn.info.transaction_status.IDLE
        assert conn.execute("SELECT current_setting('rag.groups', true)").fetchone()[0] in (None, "")
        assert conn.execute("SELECT count(*) FROM search_log").fetchone()[0] == before
        hits = retrieval.search(conn, embedder, "hotel costs in Berlin", ["staff", "finance"], k=2)
        assert hits and "Berlin" in hits[0].text
        assert conn.execute("SELECT count(*) FROM search_log").fetchone()[0] == before + 1
