"""`rag-pipeline explain LOG_ID`: a logged search with each candidate's ranks and scores per
branch, and its replay against the index as of the search's time, stating whether it is identical."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from rag_pipeline.cli.common import connection, embedder, load_config
from rag_pipeline.cli.output import console, emit_json, shown, when
from rag_pipeline.errors import EXIT_OK, UsageError

if TYPE_CHECKING:
    from rag_pipeline.retrieval.explain import Explanation, Replay


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("explain", parents=[common], help="explain and replay a logged search")
    p.add_argument("log_id", metavar="LOG_ID", help="the search's id in search_log")
    p.set_defaults(func=cmd_explain)


def log_id(value: str) -> int:
    from rag_pipeline.store.search_log import MAX_LOG_ID

    text = value.strip()
    if not text.isascii() or not text.isdigit() or not 0 < int(text) <= MAX_LOG_ID:
        raise UsageError(f"LOG_ID must be a positive whole number (a search_log id), got {value[:40]!r}")
    return int(text)


def cmd_explain(args: argparse.Namespace) -> int:
    from rag_pipeline.retrieval.explain import explain

    wanted = log_id(args.log_id)
    config = load_config(args)
    model = embedder(config)
    with connection(config) as conn:
        result = explain(conn, model, wanted)
    if args.json:
        emit_json(result.to_dict())
        return EXIT_OK
    _print(result)
    return EXIT_OK


def _print(result: Explanation) -> None:
    out = console()
    s = result.search
    out.print(f"[bold]search {s['id']}[/bold] at {when(s['searched_at'])} by {shown(s['caller'] or '(no caller given)')}"
              f" (database user {shown(s['db_user'] or '-')})")
    out.print(f"  query {shown(repr(s['query']))}  groups {shown(','.join(s['groups']) or '(none)')}"
              f"  as of {when(s['as_of']) if s['as_of'] else 'live'}  k {s['k']}"
              f"  model {shown(s['model_name'] or '-')} {shown(s['model_revision'] or '')}")
    strategy = s.get("strategy") or {}
    if strategy.get("strategy"):
        out.print(f"  vector search {_strategy(strategy)}")
    if strategy.get("fulltext"):
        out.print(f"  full-text search {_fulltext(strategy['fulltext'])}")
    if strategy.get("multilingual"):
        out.print(f"  multilingual list {_multilingual(strategy['multilingual'])}")
    purged = {t["chunk_id"] for t in result.texts if t.get("purged")}
    for label, rows in (("returned", s["results"]), ("runners-up", s["candidates"])):
        if rows:
            out.print(f"  {label}:")
        first = 1 if label == "returned" else len(s["results"]) + 1
        for rank, r in enumerate(rows, first):
            mark = "  [red]purged[/red]" if r["chunk_id"] in purged else ""
            out.print(f"    {rank}. chunk {r['chunk_id']} {shown(r['uri'])} v{r['version']}  score {r['score']:.4f}  {_branches(r)}{mark}")
    changed = [t for t in result.texts if not t["unchanged"]]
    state = ("unchanged (SHA-256 as logged)" if not changed
             else "[red]PURGED since the search[/red]" if all(t.get("purged") for t in changed)
             else "[red]CHANGED since the search[/red]")
    out.print(f"  returned texts {state}")
    for t in result.texts:
        if t.get("purged"):
            p = t["purged"]
            out.print(f"    rank {t['rank']} chunk {t['chunk_id']}: [red]PURGED[/red] at {when(p['purged_at'])}"
                      f" ({shown(p['reason'] or 'copied from a purged version')}): its text and vector are gone")
        elif not t["unchanged"]:
            out.print(f"    rank {t['rank']} chunk {t['chunk_id']}: logged {t['logged_sha256']} now {t['current_sha256'] or 'missing'}")
    _print_replay(out, f"replay as of {when(result.replay.as_of)}", result.replay)
    if result.now is not None:
        _print_replay(out, "same search on today's index", result.now)
    _print_answers(out, result.answers)


def _print_answers(out: Any, answers: list[dict[str, Any]]) -> None:
    """The answers verified against this search: verdict, who, when, and each claim's status."""
    if not answers:
        out.print("  answers verified against this search: none")
        return
    out.print(f"  answers verified against this search: {len(answers)}")
    for a in answers:
        out.print(f"    answer {a['answer_id']} {a['verdict']} at {when(a['verified_at'])}"
                  f" by {shown(a['caller'] or '(no caller given)')} (database user {shown(a['db_user'])})")
        for number, claim in enumerate(a["claims"], 1):
            cited = ", ".join(f"{c['chunk_id']} {c['status']}" for c in claim["citations"]) or "no citation"
            out.print(f"      {number}. {claim['status']}: {shown(claim['text'][:120])} ({shown(cited)})")


def _strategy(strategy: dict[str, Any]) -> str:
    """How the vector branch ran and why: the strategy, the filter's row estimate and its source."""
    passes = f"more than {strategy.get('exact_max_rows')}" if strategy.get("estimate_capped") else strategy.get("estimate")
    line = f"{strategy.get('strategy')}: the filter passes {passes} rows (exact up to {strategy.get('exact_max_rows')})"
    if strategy.get("index"):
        line += (f", index {strategy['index']} ef_search {strategy.get('ef_search')}"
                 f" iterative scan {strategy.get('iterative_scan')}")
    return shown(line)


def _fulltext(record: dict[str, Any]) -> str:
    """How the full-text branch ranked: the terms taken rarest first, how its last try asked for
    the common ones (store/bm25_aim.py), the rows it read, and whether the bound proved its list
    exact (store/bm25.py)."""
    proof = "proven exact" if record.get("exact") else f"exact down to rank {record.get('exact_depth')}"
    read = f", read {record['candidates']}" if record.get("candidates") else ""  # logged since direct_read
    common = (f", common terms whose bounds exceed {record['threshold']:g}" if record.get("threshold")
              else f", {record['at_least']} common terms together" if record.get("at_least") else "")
    return shown(f"BM25 over {record.get('matched')} candidate rows ({record.get('tries')} tries,"
                 f" {record.get('taken')} of {record.get('terms')} terms taken{common}{read}): {proof}")


def _multilingual(record: dict[str, Any]) -> str:
    """The list of non-English chunks by the multilingual model (migration 034): its model and
    floor, or why it was left out."""
    if record.get("unavailable"):
        return shown(f"left out: {record['unavailable']}")
    return shown(f"{record.get('model')}, chunks at or above similarity {record.get('floor')}")


def _branches(record: dict[str, Any]) -> str:
    parts = []
    for name, found in (record.get("branches") or {}).items():
        score = "-" if found.get("score") is None else f"{found['score']:.4f}"
        parts.append(f"{name} #{found.get('rank') or '-'} ({score})")
    return shown("  ".join(parts))


def _print_replay(out: Any, label: str, replay: Replay) -> None:
    if replay.identical:
        out.print(f"  {label}: [green]identical[/green]")
        return
    out.print(f"  {label}: [yellow]different[/yellow]")
    for d in replay.differences:
        was = d["logged_rank"] or "-"
        now = d["replayed_rank"] or "-"
        out.print(f"    chunk {d['chunk_id']} {shown(d['uri'])} v{d['version']}: {d['change']}, rank {was} -> {now}")
