"""Reading an evaluation set's file, shared by its retrieval cases (evaluate.py) and its answer
cases (answer_cases.py), so both refuse the same bad paths with the same words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rag_pipeline.common.yaml_io import YamlFileError, load_yaml_file
from rag_pipeline.errors import UsageError

# a case is a few hundred bytes: 64 MiB is over 100,000 cases, and still parses in seconds
MAX_EVAL_SET_BYTES = 64 * 1024 * 1024


class EvalSetError(UsageError):
    """The evaluation set is malformed; the message names the file and the case."""


def read_eval_set(path: Path) -> Any:
    """The YAML value of an evaluation set file (given on the command line or as
    evaluation.eval_set in the config), or EvalSetError saying what to fix."""
    try:
        return load_yaml_file(path, MAX_EVAL_SET_BYTES)
    except YamlFileError as exc:
        raise EvalSetError(f"evaluation set {exc}") from exc
