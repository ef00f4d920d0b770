"""`rag-pipeline`: the stable command-line contract of DESIGN.md (one module per command)."""

from rag_pipeline.cli.main import build_parser, main, run

__all__ = ["build_parser", "main", "run"]
