"""`rag-pipeline purge URI [--version N] --reason TEXT`: remove the text and vectors of a document's
versions for every role, keep their metadata and hashes, record the purge (sync/purge.py says
where the text lived and what becomes of each place). An operator command: it runs as the
configured login, which must own the index's tables (no rag_* role may purge)."""

from __future__ import annotations

import argparse
import getpass

from rag_pipeline.cli.common import connection, document, load_config
from rag_pipeline.cli.output import console, emit_json, shown, when
from rag_pipeline.errors import EXIT_OK, UsageError


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("purge", parents=[common],
                       help="remove a document's text and vectors for every role (recorded, irreversible)")
    p.add_argument("uri")
    p.add_argument("--version", type=int, help="only this version (default: every version)")
    p.add_argument("--reason", required=True, help="why the content must go (recorded with the purge)")
    p.set_defaults(func=cmd_purge)


def cmd_purge(args: argparse.Namespace) -> int:
    from rag_pipeline.blobs import open_blob_store
    from rag_pipeline.sync.purge import check_reason, purge_document

    if args.version is not None and args.version < 1:
        raise UsageError(f"--version must be a version number (1 or more), got {args.version}")
    reason = check_reason(args.reason)  # refused before the database is reached
    config = load_config(args)
    with connection(config) as conn:
        source, uri = document(conn, args.uri)
        blobs = open_blob_store(config.blob_store, config.blob_dir)
        result = purge_document(conn, blobs, source, uri, args.version, reason, _operator())
    if args.json:
        emit_json(result.to_dict())
        return EXIT_OK
    out = console()
    out.print(f"[bold]{shown(source)}/{shown(uri)}[/bold]")
    for v in result.purged:
        out.print(f"  v{v['version']} ({v['status']}) purged: text and vectors of {v['chunks']} chunks removed for every"
                  f" role; stored source bytes {shown(v['blob'])}; full-text statistics {v['statistics']}")
    for v in result.already:
        out.print(f"  v{v['version']} ({v['status']}) already purged at {when(v['purged_at'])}: {shown(v['reason'] or '')}")
    if result.same_content:
        numbers = ", ".join(f"v{n}" for n in result.same_content)
        out.print(f"  [yellow]note[/yellow]: {numbers} hold the same content (an access change copies it) and are not"
                  " purged: purge them with --version, or the whole document without --version")
    if result.purged:
        out.print(f"  recorded with the reason {shown(reason)!r}; metadata and hashes kept (`rag-pipeline history {shown(uri)}`)")
    return EXIT_OK


def _operator() -> str | None:
    """The operating-system user running the command, recorded beside the database login."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return None
