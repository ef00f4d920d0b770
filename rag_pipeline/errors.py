"""The pipeline's one error type. Every error a user can meet derives from `PipelineError` and
carries the exit code the CLI returns for it, so `main` catches one class and each message is
written for the person who must act: it names the file or object and what to do."""

from __future__ import annotations

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_GATE = 0, 1, 2, 3


class PipelineError(Exception):
    """Any failure the pipeline reports to its user (exit code 1 unless a subclass says else)."""

    exit_code = EXIT_FAILURE


class UsageError(PipelineError):
    """Bad arguments, configuration or input files named on the command line (exit code 2)."""

    exit_code = EXIT_USAGE


class GateFailedError(PipelineError):
    """The evaluation gate did not pass, so nothing was published (exit code 3)."""

    exit_code = EXIT_GATE
