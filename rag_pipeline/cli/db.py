"""`rag-pipeline db start|stop|status|url`: the embedded PostgreSQL server of the state folder;
`db prune-models [--model ID]`: remove retired embedding models' vectors (issue 26);
`db dictionaries --out DIR`: the Hunspell text-search dictionaries (migration 029) for another server.

One server per state folder, shared by the CLI and every Dagster process; it outlives them all
until `db stop`. With DATABASE_URL (or `database_url`) there is no embedded server: `url`
prints that URL and `start`/`stop` say so."""

from __future__ import annotations

import argparse

from rag_pipeline.cli.common import load_config
from rag_pipeline.cli.output import console, emit_json, shown
from rag_pipeline.errors import EXIT_OK, UsageError

ACTIONS = ("start", "stop", "status", "url", "prune-models", "dictionaries")


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("db", parents=[common], help="the embedded database server: start, stop, status, url; "
                                                    "prune-models: remove retired models' vectors; "
                                                    "dictionaries: text-search dictionaries for an external server")
    p.add_argument("action", choices=ACTIONS)
    p.add_argument("--dagster", action="store_true",
                   help="with url: the database that holds Dagster's runs and events (created if missing)")
    p.add_argument("--model", type=int, metavar="ID", help="with prune-models: only this model (default: every retired one)")
    p.add_argument("--out", metavar="DIR", help="with dictionaries: where to write the files (then copy them into the "
                                                "server's $(pg_config --sharedir)/tsearch_data)")
    p.set_defaults(func=cmd_db)


def cmd_db(args: argparse.Namespace) -> int:
    from rag_pipeline.store import database

    if args.action == "dictionaries":
        return _dictionaries(args)
    if args.out is not None:
        raise UsageError("--out goes with `db dictionaries`")
    config = load_config(args)
    if args.action == "prune-models":
        return _prune_models(args, config)
    if args.model is not None:
        raise UsageError("--model goes with `db prune-models`")
    if args.dagster and args.action != "url":
        raise UsageError("--dagster goes with `db url`")
    if config.database_url:
        return _external(args, config.database_url)
    pgdata = config.pgdata_dir
    if args.action == "start":
        state = database.start_server(pgdata)
        return _report(args, state.to_dict(), f"running: pid {state.pid}, data {shown(state.pgdata)}")
    if args.action == "stop":
        stopped = database.stop_server(pgdata)
        return _report(args, {"pgdata": str(pgdata.resolve()), "stopped": stopped},
                       "stopped" if stopped else f"not running (data {shown(pgdata.resolve())})")
    if args.action == "status":
        state = database.server_state(pgdata)
        if state.running:
            text = (f"running: pid {state.pid}, data {shown(state.pgdata)}, url {shown(state.url)}, "
                    f"started {shown(state.started_at)}" + (f" by {shown(state.started_by)}" if state.started_by else ""))
        else:
            text = f"not running (data {shown(state.pgdata)}); `rag-pipeline db start` or any command starts it"
        return _report(args, state.to_dict(), text)
    url = database.embedded_url(pgdata)
    return _print_url(args, database.dagster_url(url) if args.dagster else url)


def _external(args: argparse.Namespace, url: str) -> int:
    from rag_pipeline.store import database

    if args.action == "url":
        return _print_url(args, database.dagster_url(url) if args.dagster else url)
    if args.action == "status":
        database.connect(url).close()  # raises DatabaseError naming the problem when unreachable
        return _report(args, {"external": True, "running": True}, "DATABASE_URL is set: using that server (reachable)")
    raise UsageError(f"`db {args.action}` manages the embedded server only; DATABASE_URL (or database_url) is set, "
                     "so that server is used and managed elsewhere")


def _print_url(args: argparse.Namespace, url: str) -> int:
    if args.json:
        emit_json({"url": url})
    else:
        print(url)  # plain, for $(rag-pipeline db url) in scripts
    return EXIT_OK


def _report(args: argparse.Namespace, data: dict, text: str) -> int:
    if args.json:
        emit_json(data)
    else:
        console().print(text)
    return EXIT_OK


def _prune_models(args: argparse.Namespace, config: object) -> int:
    """Delete the vectors of models that are neither the index's nor a running migration's: after
    it, `migrate-model --rollback` to such a model must embed again."""
    from rag_pipeline import store
    from rag_pipeline.cli.common import connection
    from rag_pipeline.migration import steps

    if args.dagster:
        raise UsageError("--dagster goes with `db url`")
    with connection(config, store.roles.WRITER) as conn:  # type: ignore[arg-type]
        pruned = steps.prune(conn, args.model)
    text = ("; ".join(f"model {m}: {n} vectors removed" for m, n in pruned.items())
            or "no retired model has vectors beside the chunks: nothing to prune")
    return _report(args, {"pruned": {str(m): n for m, n in pruned.items()}}, text)


def _dictionaries(args: argparse.Namespace) -> int:
    """Write the accent-folded Hunspell dictionaries of the languages found on this machine into
    --out, for a server the embedded set-up does not manage; unaccent.rules is read from the
    embedded server's share folder (the same rules the `unaccent` extension ships)."""
    from pathlib import Path

    from rag_pipeline.store import text_dictionaries

    if not args.out:
        raise UsageError("`db dictionaries` needs --out DIR (a folder to write rag_<language>.dict/.affix into)")
    share = text_dictionaries.embedded_tsearch_dir()
    if share is None or not (share / "unaccent.rules").is_file():
        raise UsageError("no unaccent.rules to fold with: install the project (scripts/setup.sh) first")
    if not text_dictionaries.hunspell_sources():
        raise UsageError("no Hunspell dictionaries on this machine: apt-get install hunspell-cs hunspell-sk "
                         "hunspell-pl hunspell-hr hunspell-sl")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {args.out}: not a folder")
    try:
        written = text_dictionaries.write_files(out, share / "unaccent.rules")
    except OSError as exc:
        raise UsageError(f"--out {args.out}: cannot write there ({exc.strerror or exc})") from exc
    files = sorted(str(p) for p in out.glob(f"{text_dictionaries.FILE_STEM}*") if p.suffix in (".dict", ".affix"))
    text = (f"wrote {len(files)} files for {', '.join(written)} into {shown(str(out))}: copy them into the server's "
            "share/tsearch_data ($(pg_config --sharedir)/tsearch_data), then run SELECT rag_install_text_dictionaries(); "
            "in the index database")
    return _report(args, {"languages": written, "files": files}, text)
