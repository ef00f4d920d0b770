"""Shared fixtures. Everything here is real: the corpus on disk, PostgreSQL, the model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("RAG_CORPUS_DIR", PROJECT_ROOT.parent / "shared" / "corpus"))


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The shared real-document corpus (../shared/corpus). Tests that need it fail loudly if absent."""
    if not (CORPUS / "MANIFEST.tsv").exists():
        pytest.fail(f"shared corpus not found at {CORPUS}; set RAG_CORPUS_DIR to its folder")
    return CORPUS
