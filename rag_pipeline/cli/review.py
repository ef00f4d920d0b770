"""`rag-pipeline review`: the queue of flagged and rejected answers and decisions on them from
the command line (`list`, `show`, `decide`), reviewers (`add-reviewer`), and the review screen
(`serve`, loopback by default). Exit 2 for an unknown answer or one the reviewer may not read."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from typing import Any

from rag_pipeline.cli.common import connection, document, embedder, groups, load_config, read_limited
from rag_pipeline.cli.output import console, emit_json, err, pages, shown, when
from rag_pipeline.errors import EXIT_OK, UsageError


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("review", parents=[common], help="review flagged and rejected answers")
    review = p.add_subparsers(dest="review_command", required=True)
    who = argparse.ArgumentParser(add_help=False)
    who.add_argument("--reviewer", help="act as this registered reviewer (their groups apply); "
                                        "default: the database login, as cli:<os user>")

    q = review.add_parser("list", parents=[common, who], help="the queue, newest first")
    q.add_argument("--status", default="open", help="open (default), flagged, rejected, approve, reject, correct, verified, all")
    q.add_argument("--source")
    q.add_argument("--document", help="a document URI (with or without its source)")
    q.add_argument("--since", help="verified at or after (ISO 8601)")
    q.add_argument("--until", help="verified before (ISO 8601)")
    q.add_argument("--limit", default="50")
    q.add_argument("--cursor", help="the next page (printed after a full page)")
    q.set_defaults(func=cmd_list)

    s = review.add_parser("show", parents=[common, who], help="one answer: question, passages, draft, citation map")
    s.add_argument("answer_id")
    s.set_defaults(func=cmd_show)

    d = review.add_parser("decide", parents=[common, who], help="approve, reject or correct an answer (appended)")
    d.add_argument("answer_id")
    choice = d.add_mutually_exclusive_group(required=True)
    choice.add_argument("--approve", action="store_true")
    choice.add_argument("--reject", action="store_true")
    choice.add_argument("--correct", metavar="FILE", help="the corrected answer (JSON or text with [chunk N] markers; '-': stdin)")
    d.add_argument("--comment")
    d.set_defaults(func=cmd_decide)

    a = review.add_parser("add-reviewer", parents=[common], help="add a reviewer or change their password and groups")
    a.add_argument("name")
    a.add_argument("--groups", required=True, help="comma-separated access groups")
    a.add_argument("--no-password", action="store_true", help="signs in through the reverse proxy's header only")
    a.set_defaults(func=cmd_add_reviewer)

    v = review.add_parser("serve", parents=[common], help="the review screen (a web application)")
    v.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1 (loopback only)")
    v.add_argument("--port", type=int, default=8765)
    v.add_argument("--proxy-user-header", help="trust this request header (set by an authenticating reverse proxy) "
                                               "as the reviewer's name instead of the password sign-in")
    v.set_defaults(func=cmd_serve)


def _answer_id(value: str) -> int:
    text = value.strip()
    if not text.isdigit() or len(text) > 18:
        raise UsageError(f"answer id {value[:40]!r} is not a positive whole number")
    return int(text)


def _acting(conn: Any, args: argparse.Namespace) -> tuple[str, tuple[str, ...] | None]:
    from rag_pipeline.review.reviewers import named

    if args.reviewer:
        found = named(conn, args.reviewer)
        return found.name, found.groups
    return f"cli:{getpass.getuser()}", None


def cmd_list(args: argparse.Namespace) -> int:
    from rag_pipeline import store
    from rag_pipeline.review import queue

    config = load_config(args)
    with connection(config) as conn:
        _, reviewer_groups = _acting(conn, args)
        document_id = None
        if args.document:
            source, uri = document(conn, args.document)
            document_id = str(store.reviews.document_id(conn, source, uri))
        wanted = queue.queue_filter(status=args.status, source=args.source, document=document_id, since=args.since,
                                    until=args.until, cursor=args.cursor, limit=args.limit, groups=reviewer_groups)
        found = queue.page(conn, wanted)
    if args.json:
        emit_json({"answers": found.rows, "next_cursor": found.next_cursor})
        return EXIT_OK
    out = console()
    for r in found.rows:
        out.print(f"{r['answer_id']:>8}  {when(r['verified_at'])}  {r['verdict']:<8} {r['state']:<8} "
                  f"{r['unsupported']}/{r['claims']} not supported  {shown(r['query'])[:100]}")
    if not found.rows:
        out.print("nothing to review")
    if found.next_cursor:
        out.print(f"more: --cursor {found.next_cursor}")
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    from rag_pipeline import store
    from rag_pipeline.review import record

    answer_id = _answer_id(args.answer_id)
    config = load_config(args)
    with connection(config) as conn:
        name, reviewer_groups = _acting(conn, args)
        found = record.load(conn, answer_id, reviewer_groups)
        store.reviews.record_view(conn, name, answer_id)
    if args.json:
        emit_json(found.to_dict())
        return EXIT_OK
    out = console()
    out.print(f"[bold]answer {found.answer_id}[/bold] {found.verdict} (state {found.state}), search {found.search_id}")
    out.print(f"question: {shown(found.question)}  (asked by {shown(found.caller or '-')}, groups {shown(','.join(found.search_groups))})")
    out.print("[bold]passages[/bold]")
    for p in found.passages:
        out.print(f"  chunk {p.chunk_id} rank {p.rank or '-'} {shown(p.uri)} v{p.version_no} \\[{shown(' > '.join(p.section_path) or '-')}] "
                  f"pages {pages(*p.pages)} {p.validity()}")
    out.print("[bold]claims[/bold]")
    for number, claim in enumerate(found.claims, 1):
        out.print(f"  {number}. {claim['status']}: {shown(claim['text'])}")
        for c in claim.get("citations", []):
            out.print(f"     - chunk {c['chunk_id']}: {c['status']}: {shown(c['reason'])}")
    out.print("[bold]decisions[/bold]")
    for d in found.decisions:
        out.print(f"  {when(d['decided_at'])} {shown(d['reviewer'])} {d['decision']}"
                  + (f" (correction {d['corrected_verdict']})" if d["corrected_verdict"] else "")
                  + (f": {shown(d['comment'])}" if d["comment"] else ""))
    return EXIT_OK


def cmd_decide(args: argparse.Namespace) -> int:
    from rag_pipeline.answers.draft import MAX_ANSWER_BYTES
    from rag_pipeline.review.decide import decide

    answer_id = _answer_id(args.answer_id)
    decision = "approve" if args.approve else "reject" if args.reject else "correct"
    correction = None if args.correct is None else read_limited(args.correct, MAX_ANSWER_BYTES + 1)
    config = load_config(args)
    with connection(config) as conn:
        name, reviewer_groups = _acting(conn, args)
        from rag_pipeline.review import record

        record.load(conn, answer_id, reviewer_groups)  # unknown or unreadable: exit 2 before the model loads
        model = embedder(config) if correction is not None else None
        done = decide(conn, answer_id, decision, reviewer=name, groups=reviewer_groups, comment=args.comment,
                      correction=correction, embedder=model)
    if args.json:
        emit_json(done)
    else:
        extra = f": the correction is {done['corrected_verdict']}" if done.get("corrected_verdict") else ""
        console().print(f"decision {done['id']}: {decision} answer {answer_id} by {shown(name)}{extra}")
    return EXIT_OK


def cmd_add_reviewer(args: argparse.Namespace) -> int:
    from rag_pipeline.review.reviewers import add_reviewer

    password = None if args.no_password else _password()
    config = load_config(args)
    with connection(config) as conn:
        added = add_reviewer(conn, args.name, groups(args.groups), password)
    if args.json:
        emit_json({"reviewer": args.name.strip(), "added": added, "groups": groups(args.groups)})
    else:
        console().print(f"reviewer {shown(args.name.strip())} {'added' if added else 'updated'}")
    return EXIT_OK


def _password() -> str:
    """From a prompt (twice) on a terminal, else the first line of standard input."""
    if sys.stdin.isatty():
        first = getpass.getpass("password: ")
        if getpass.getpass("again: ") != first:
            raise UsageError("the passwords differ")
        return first
    line = sys.stdin.readline()
    if not line:
        raise UsageError("no password on standard input (or use --no-password for proxy sign-in)")
    return line.rstrip("\r\n")


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from rag_pipeline.sync.context import prepare_database
    from rag_pipeline.web.app import create_app

    config = load_config(args)
    if args.host not in ("127.0.0.1", "::1", "localhost"):
        err(f"listening on {args.host}: the screen is reachable from other machines; put it behind a TLS proxy")
    app = create_app(prepare_database(config), proxy_header=args.proxy_user_header,
                     secret=os.environ.get("RAG_REVIEW_SECRET"), embedder=lambda: embedder(config))
    uvicorn.run(app, host=args.host, port=args.port, log_level="info", proxy_headers=False)
    return EXIT_OK
