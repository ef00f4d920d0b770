"""`rag-pipeline history` and `show`: every version of a document, and the chunks one version
held, for audits."""

from __future__ import annotations

import argparse

from rag_pipeline.cli.common import as_of, connection, document, load_config
from rag_pipeline.cli.output import console, emit_json, pages, shown, when
from rag_pipeline.errors import EXIT_OK, UsageError


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("history", parents=[common], help="every version of a document")
    p.add_argument("uri")
    p.set_defaults(func=cmd_history)

    p = sub.add_parser("show", parents=[common], help="a version's chunks, as indexed")
    p.add_argument("uri")
    p.add_argument("--version", type=int)
    p.add_argument("--as-of")
    p.set_defaults(func=cmd_show)


def cmd_history(args: argparse.Namespace) -> int:
    from rag_pipeline import store

    config = load_config(args)
    with connection(config) as conn:
        source, uri = document(conn, args.uri)
        versions = store.history.history(conn, source, uri)
    if args.json:
        emit_json({"source": source, "uri": uri, "versions": versions})
        return EXIT_OK
    out = console()
    out.print(f"[bold]{shown(source)}/{shown(uri)}[/bold]")
    for v in versions:
        window = f"{when(v['valid_from'])} .. {when(v['valid_to']) if v['valid_to'] else 'now'}"
        out.print(
            f"  v{v['version_no']} {v['status']:<10} {v['change']:<9} {window}  groups {shown(','.join(v['acl_groups']) or '(none)')}"
            f"  checksum {shown(str(v['checksum'] or '-')[:19])}  run {shown(v['run_id'])}  model {shown(v['model_name'] or '-')}"
            + (f"  [red]PURGED[/red] {when(v['purged_at'])}: {shown(v['purge_reason'] or 'copied from a purged version')}"
               if v["purged_at"] else "")
        )
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    from rag_pipeline import store

    if args.version is not None and args.as_of:
        raise UsageError("give --version or --as-of, not both")
    config = load_config(args)
    at = as_of(args.as_of)
    with connection(config) as conn:
        source, uri = document(conn, args.uri)
        version = store.history.version_for(conn, source, uri, args.version, at)
        if version is None:
            what = (f"version {args.version}" if args.version is not None
                    else f"a version live at {args.as_of}" if at else "a live version")
            raise UsageError(f"{source}/{uri} has no {what}; see `rag-pipeline history {uri}`")
        chunks = store.history.version_chunks(conn, version["id"])
        version["purge"] = store.purge.version_purge(conn, version["id"])
    if args.json:
        emit_json({"source": source, "uri": uri, "version": {k: v for k, v in version.items() if k != "id"}, "chunks": chunks})
        return EXIT_OK
    out = console()
    out.print(f"[bold]{shown(source)}/{shown(uri)}[/bold] v{version['version_no']} ({version['status']}), {len(chunks)} chunks")
    purge = version["purge"]
    if purge:
        out.print(f"[red]purged[/red] at {when(purge['purged_at'])} by {shown(purge['purged_by'] or '-')} (database user"
                  f" {shown(purge['db_user'])}): {shown(purge['reason'])}; stored source bytes {shown(purge['blob'])}")
    for c in chunks:
        out.print(f"\n[bold]chunk {c['chunk_id']}[/bold] #{c['ord']} \\[{shown(' > '.join(c['section_path']) or '-')}] "
                  f"pages {pages(c['page_start'], c['page_end'])} chars {c['char_start']}-{c['char_end']}")
        if c["purged_at"]:
            out.print(f"[red]text and vector purged[/red] at {when(c['purged_at'])}")
            continue
        out.print(f"embedded as: {_embedded_as(c.get('search_prefix'))}")
        out.print(shown(c["text"], one_line=False))
    return EXIT_OK


def _embedded_as(prefix: str | None) -> str:
    """The lines the model saw before the chunk's text (identity line, then section path), each
    in brackets; chunks indexed before these were recorded say so."""
    if prefix is None:
        return "(not recorded: indexed before chunker sections4; section path + text)"
    lines = [line for line in prefix.split("\n") if line]
    return " / ".join(f"\\[{shown(line)}]" for line in lines) + " + text" if lines else "text only"
