"""Entry point for workspace.yaml, `dg` and the CLI: everything under rag_pipeline/defs."""

from pathlib import Path

import dagster as dg


def load_definitions() -> dg.Definitions:
    return dg.load_from_defs_folder(path_within_project=Path(__file__).parent)


@dg.definitions
def defs() -> dg.Definitions:
    return load_definitions()
