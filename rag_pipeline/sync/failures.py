"""A step's failure on one document, named.

Parse quarantines a file it cannot read and goes on; the steps after it work on text the
pipeline itself produced, so a failure there is a defect, not bad input, and the run stops. What
the person who must act needs then is which of thousands of documents it stopped on: a traceback
names a line of the chunker, not the file. Every per-document step wraps its work in `naming`,
so the error names the source, the document and the step; the documents already done stay
recorded, and the step re-executed starts at this one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rag_pipeline.errors import PipelineError
from rag_pipeline.sync.items import WorkItem


class DocumentFailedError(PipelineError):
    """A step raised on one document (its cause is chained)."""


@contextmanager
def naming(item: WorkItem, step: str) -> Iterator[None]:
    """Re-raise any failure inside as a `DocumentFailedError` naming the document; an error of
    the pipeline's own (which already says what is wrong and where) passes unchanged."""
    try:
        yield
    except PipelineError:
        raise
    except Exception as exc:
        raise DocumentFailedError(
            f"{step} step: document {item.uri!r} of source {item.source!r} failed ({type(exc).__name__}: {exc}). "
            "The run stops at this step: remove or fix that file and sync again, or report this error with the file."
        ) from exc
