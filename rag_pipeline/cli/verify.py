"""`rag-pipeline verify ANSWER.json`: check a generated answer's citations against the logged
search it came from, print the verdict and each claim's and citation's status with its reason,
and append it to the answer record. Exit 0 when a verdict was given (whatever it is), 2 for bad
input (nothing recorded)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rag_pipeline.cli.common import connection, embedder, load_config, read_limited
from rag_pipeline.cli.output import console, emit_json, pages, shown
from rag_pipeline.errors import EXIT_OK

if TYPE_CHECKING:
    from rag_pipeline.answers.verify import Verification


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("verify", parents=[common], help="verify a generated answer's citations and record it")
    p.add_argument("answer", metavar="ANSWER.json",
                   help="the answer (JSON, or plain text with [chunk N] markers); '-' reads standard input")
    p.add_argument("--log-id", help="the search a plain-text answer was generated from (a search_log id)")
    p.add_argument("--user", help="the caller's identity, as the search was logged with it")
    p.set_defaults(func=cmd_verify)


def cmd_verify(args: argparse.Namespace) -> int:
    from rag_pipeline.answers.draft import MAX_ANSWER_BYTES, read_answer
    from rag_pipeline.answers.verify import verify
    from rag_pipeline.cli.explain import log_id

    wanted = None if args.log_id is None else log_id(args.log_id)
    draft = read_answer(read_limited(args.answer, MAX_ANSWER_BYTES + 1), wanted)  # bad input fails before any load
    config = load_config(args)
    model = embedder(config)
    with connection(config) as conn:
        result = verify(conn, model, draft, user=args.user)
    if args.json:
        emit_json(result.to_dict())
    else:
        _print(result)
    return EXIT_OK


def _print(result: Verification) -> None:
    out = console()
    colour = {"verified": "green", "flagged": "yellow", "rejected": "red"}[result.verdict]
    out.print(f"[bold {colour}]{result.verdict.upper()}[/bold {colour}] answer {result.answer_id} to search {result.log_id}"
              f" (judged as of {result.judged_as_of.isoformat(timespec='seconds')})")
    if result.message:
        out.print(f"  {shown(result.message)}")
    for number, claim in enumerate(result.claims, 1):
        out.print(f"  {number}. [bold]{claim.status}[/bold]: {shown(claim.text)}")
        out.print(f"     {shown(claim.reason)}")
        for c in claim.citations:
            where = ""
            if c.visible and c.chunk is not None:
                section = " > ".join(c.chunk["section_path"]) or "-"
                where = (f" {shown(c.chunk['uri'])} v{c.chunk['version_no']} \\[{shown(section)}]"
                         f" pages {pages(c.chunk['page_start'], c.chunk['page_end'])}")
            out.print(f"     - chunk {c.chunk_id}{where}: {c.status}: {shown(c.reason)}")
