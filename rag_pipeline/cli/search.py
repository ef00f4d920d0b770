"""`rag-pipeline search`: one query, or a JSONL batch with one model load."""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag_pipeline.cli.common import as_of, connection, embedder, groups, load_config
from rag_pipeline.cli.output import console, emit_json, pages, shown
from rag_pipeline.common import heap
from rag_pipeline.errors import EXIT_FAILURE, EXIT_OK, PipelineError, UsageError

if TYPE_CHECKING:
    import psycopg

    from rag_pipeline.config import Config
    from rag_pipeline.embedding import Embedder
    from rag_pipeline.retrieval.refusal import Decision
    from rag_pipeline.retrieval.search import Hit, Results


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("search", parents=[common], help="search the index as a user with the given groups")
    p.add_argument("query", nargs="?")
    p.add_argument("--groups", default="", help="comma-separated groups of the caller")
    p.add_argument("--as-of", help="search the index as it was at this ISO 8601 time")
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--queries", help="JSONL file of queries (batch mode)")
    p.add_argument("--user", help="the caller's identity, recorded as given in the search log")
    p.set_defaults(func=cmd_search)


def cmd_search(args: argparse.Namespace) -> int:
    if bool(args.query) == bool(args.queries):
        raise UsageError("give either a QUERY or --queries FILE.jsonl")
    if args.k <= 0:
        raise UsageError("-k must be positive")
    from rag_pipeline.retrieval.search import check_request

    caller_groups = groups(args.groups)
    # what cannot be searched is refused before the model loads or the database is reached
    check_request(args.query or "", caller_groups, args.user, args.k)
    config = load_config(args)
    when = as_of(args.as_of)
    model = embedder(config)
    from rag_pipeline.store.roles import READER

    with connection(config, role=READER) as conn:
        if args.queries:
            heap.work_begins()
            return _search_batch(conn, config, model, Path(args.queries), caller_groups, when, args.k, args.user)
        from rag_pipeline.retrieval.search import search

        hits = search(conn, model, args.query, caller_groups, k=args.k, as_of=when, user=args.user)
        decision = _decision(config, hits)
    if args.json:
        emit_json({"query": args.query, "groups": caller_groups, "as_of": when, "k": args.k,
                   **_answer(hits, decision)})
        return EXIT_OK
    if decision.refused and hits:
        console().print(f"[yellow]REFUSED: no answer in the index: {shown(decision.reason)}. "
                        "The closest passages follow; they do not answer the question.[/yellow]")
    _print_hits(args.query, caller_groups, hits)
    return EXIT_OK


def _answer(hits: Results, decision: Decision) -> dict[str, Any]:
    """The answer of one search in the JSON of a single search and of each batch line alike
    (DESIGN.md, "CLI contract"): its log id, whether it is refused and why, and the hits."""
    return {"log_id": hits.log_id, "refused": decision.refused, "refusal": decision.to_dict(),
            "results": [h.to_dict() for h in hits]}


def _decision(config: Config, hits: Results) -> Decision:
    """Whether the index answers: the first result's answer score against the threshold in force
    (the calibration the search read with its model, in its first round trip)."""
    from rag_pipeline.retrieval.refusal import decide, threshold_from

    return decide(hits, threshold_from(hits.calibration, config.evaluation.refusal_score))


def _print_hits(query: str, caller_groups: list[str], hits: list[Hit]) -> None:
    out = console()
    if not caller_groups:
        out.print("[yellow]no --groups given: default deny, nothing is visible[/yellow]")
    if not hits:
        out.print(f"no results for {shown(repr(query))} visible to groups {shown(caller_groups)}")
    for rank, hit in enumerate(hits, 1):
        section = shown(" > ".join(hit.section_path) or "-")
        out.print(
            f"[bold]{rank}. {shown(hit.uri)}[/bold] v{hit.version_no}  \\[{section}]  pages {pages(hit.page_start, hit.page_end)}"
            f"  chunk {hit.chunk_id}  score {hit.score:.4f} (similarity {hit.similarity:.3f})"
        )
        text = " ".join(hit.text.split())
        out.print("   " + shown(text[:400] + "…" if len(text) > 400 else text))


MAX_LINE_BYTES = 1024 * 1024  # far above any real query line (queries are capped far below)


def _lines(handle: Any) -> Any:
    """The file's lines as bytes, or None for a line over MAX_LINE_BYTES (read past, never held)."""
    while raw := handle.readline(MAX_LINE_BYTES + 1):
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while (rest := handle.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass
            yield None
        else:
            yield raw


def _request(request: Any, caller_groups: list[str]) -> tuple[str, list[str], str | None]:
    """(query, groups, as_of) of one batch line, or ValueError saying what is wrong with it."""
    if not isinstance(request, dict) or not isinstance(request.get("query"), str):
        raise ValueError("each line must be an object with a string 'query'")
    line_groups = request.get("groups", caller_groups)
    if not isinstance(line_groups, list) or not all(isinstance(g, str) and "\x00" not in g for g in line_groups):
        raise ValueError("'groups' must be a list of strings (without NUL characters)")
    line_as_of = request.get("as_of")
    if line_as_of is not None and (not isinstance(line_as_of, str) or "\x00" in line_as_of):
        raise ValueError("'as_of' must be an ISO 8601 string")
    return request["query"], line_groups, line_as_of


def _search_batch(conn: psycopg.Connection, config: Config, model: Embedder, path: Path, caller_groups: list[str],
                  when: datetime | None, k: int, user: str | None) -> int:
    """One JSON line out per line in; a bad line gets its own error line and the batch goes on."""
    from rag_pipeline.common.times import parse_time
    from rag_pipeline.retrieval.search import search

    try:
        handle = path.open("rb")
    except OSError as exc:
        raise UsageError(f"--queries {path}: {exc.strerror}") from exc
    failed = 0
    with handle:
        for number, raw in enumerate(_lines(handle), 1):
            request: Any = None
            try:
                if raw is None:
                    raise ValueError(f"line is longer than {MAX_LINE_BYTES:,} bytes; it was skipped")
                line = raw.decode("utf-8")
                if not line.strip():
                    continue
                request = json.loads(line)
                query, line_groups, line_as_of = _request(request, caller_groups)
                line_user = request.get("user", user)
                if line_user is not None and not isinstance(line_user, str):
                    raise ValueError("'user' must be a string")
                line_when = parse_time(line_as_of) if line_as_of else when
                hits = search(conn, model, query, line_groups, k=k, as_of=line_when, user=line_user)
                decision = _decision(config, hits)
                emit_json({"id": request.get("id"), "query": query, **_answer(hits, decision)})
            except (ValueError, RecursionError, UnicodeDecodeError, PipelineError) as exc:
                # JSONDecodeError and an int of over 4,300 digits are ValueErrors; nesting too deep for
                # json's recursion is a RecursionError
                failed += 1
                emit_json({"id": request.get("id") if isinstance(request, dict) else None,
                           "line": number, "error": f"{path}:{number}: {exc}"})
    return EXIT_FAILURE if failed else EXIT_OK
