"""Shards of a sync step: what a sharded run (one Dagster step per shard, on any machine) works
on. The listing is pure, so it is checked against hostile inputs without a database."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rag_pipeline.sync.batches import Shard, list_shards

STEP_NAME = re.compile(r"^[A-Za-z0-9_]+$")  # what Dagster accepts in a mapping key


def _covered(shards: list[Shard]) -> list[tuple[str, str]]:
    return [key for shard in shards for key in shard.keys()]


def test_no_items_make_no_shards() -> None:
    assert list_shards([], 5) == []


def test_one_source_with_many_items_is_cut_into_shards_of_the_size_in_uri_order() -> None:
    keys = [("docs", f"f{i:05d}.md") for i in range(10_001)]
    shards = list_shards(reversed(keys), 1000)
    assert [len(s.uris) for s in shards] == [1000] * 10 + [1]
    assert _covered(shards) == keys  # every item once, in order, whatever order they came in
    assert [s.offset for s in shards] == [i * 1000 for i in range(11)] and {s.total for s in shards} == {10_001}


def test_a_shard_never_spans_two_sources() -> None:
    keys = [(f"src-{s}", f"doc{i}.md") for s in range(50) for i in range(3)]
    shards = list_shards(keys, 2)
    assert len(shards) == 100  # 2 + 1 per source
    assert all(len({source for source, _ in s.keys()}) == 1 for s in shards)
    assert sorted(_covered(shards)) == sorted(keys)
    assert [s.index for s in shards] == list(range(100))


def test_shard_size_one_gives_a_shard_per_document_and_duplicates_count_once() -> None:
    keys = [("a", "x"), ("a", "y"), ("a", "x"), ("b", "x")]
    shards = list_shards(keys, 1)
    assert [(s.source, s.uris) for s in shards] == [("a", ("x",)), ("a", ("y",)), ("b", ("x",))]


@pytest.mark.parametrize("size", [0, -3])
def test_a_shard_size_below_one_is_refused(size: int) -> None:
    with pytest.raises(ValueError, match="positive"):
        list_shards([("a", "x")], size)


def test_odd_source_and_file_names_give_valid_distinct_step_names_and_survive_the_round_trip() -> None:
    sources = ["wiki-notes", "ünïcödé", "a b/c", "", "🙂", "x" * 300, "a_b", "a-b", "../etc", "Robert'); DROP TABLE--"]
    uris = ["dir/é ü.md", "a\nb.md", "'quoted'.md", "x" * 2000 + ".md", "%00.md"]
    shards = list_shards([(s, u) for s in sources for u in uris], 2)
    names = [s.key for s in shards]
    assert all(STEP_NAME.match(n) for n in names), names
    assert len(set(names)) == len(names)  # sources that slug alike still get distinct names
    assert all(len(n) <= 60 for n in names)
    assert [Shard.from_dict(s.to_dict()) for s in shards] == shards  # as the shard travels between machines
    assert sorted(_covered(shards)) == sorted((s, u) for s in sources for u in uris)


def test_a_shard_run_again_skips_what_it_already_did_and_leaves_other_shards_alone(
        tmp_path: Path, db_url: str, demo_copy: Path, embedder) -> None:
    """A shard step that Dagster retries (lost connection, worker gone) resumes: items it already
    moved on are not parsed again, and no shard touches another shard's items."""
    from conftest import write_config
    from helpers import query

    from rag_pipeline import store
    from rag_pipeline.config import load_config
    from rag_pipeline.sync import parse, plan
    from rag_pipeline.sync.context import SyncContext

    config = load_config(write_config(tmp_path, db_url, docs=demo_copy, extra="shard_size: 3\n"))
    ctx = SyncContext(config=config, db_url=db_url, run_id="shard-retry-1")
    with ctx.connect() as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
    plan.plan_run(ctx, model_id)
    shards = parse.shards(ctx)
    assert [len(s.uris) for s in shards] == [3, 3, 1]
    first = parse.parse_items(ctx, shards[0])
    again = parse.parse_items(ctx, shards[0])
    assert first.counts["parsed"] == 3 and again.counts.get("parsed", 0) == 0
    stages = dict(query(db_url, "SELECT uri, stage FROM run_items WHERE run_id = %s", ctx.run_id))
    assert {u for u, s in stages.items() if s == "parsed"} == set(shards[0].uris)


def test_the_caller_works_once_while_the_parser_starts_before_anything_is_parsed(
        tmp_path: Path, db_url: str, demo_copy: Path, embedder) -> None:
    """`meanwhile` (the model load, in a run whose steps share the process) runs once per call,
    in the caller's process, after the parser was launched and before any document is parsed:
    the two start-ups overlap instead of adding up. Every shard is still parsed."""
    import multiprocessing

    from conftest import write_config
    from helpers import query

    from rag_pipeline import store
    from rag_pipeline.config import load_config
    from rag_pipeline.sync import parse, plan
    from rag_pipeline.sync.context import SyncContext

    config = load_config(write_config(tmp_path, db_url, docs=demo_copy, extra="shard_size: 3\n"))
    ctx = SyncContext(config=config, db_url=db_url, run_id="parse-meanwhile-1")
    with ctx.connect() as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
    plan.plan_run(ctx, model_id)
    seen = []

    def meanwhile() -> None:
        parsers = [p for p in multiprocessing.active_children() if p.name == "rag-parse-worker"]
        parsed = query(db_url, "SELECT count(*) FROM run_items WHERE run_id = %s AND stage = 'parsed'", ctx.run_id)
        seen.append((len(parsers), parsed[0][0]))

    result = parse.parse_items(ctx, meanwhile=meanwhile)
    assert seen == [(1, 0)]
    assert result.counts["parsed"] == 7
