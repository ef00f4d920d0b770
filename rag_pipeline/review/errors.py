"""The review's errors: an answer, document or version that does not exist and one the reviewer
may not read are the same error (the screen answers 404 to both, so a reviewer cannot learn
which answers exist for documents they may not read)."""

from __future__ import annotations

from rag_pipeline.errors import UsageError


class NotFoundError(UsageError):
    """No such answer (or document, or version) for this reviewer: exit 2, HTTP 404."""


class SignInError(UsageError):
    """Unknown reviewer or wrong password (one message for both)."""
