"""What a parser's verdict on a file depends on besides its bytes.

The same bytes through the same project and parser version under the same limits fail the
same way: a file the parser refused (corrupt, encrypted, unsupported, over a limit, too slow) is
not parsed again while its content and this key stay the same (plan carries the failure
forward). New bytes, an upgrade, or changed `limits:` in the configuration retry it."""

from __future__ import annotations

import hashlib
import json

from rag_pipeline import __version__
from rag_pipeline.parsing import KIND_BY_SUFFIX, parser_version_for
from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.detect import file_suffix
from rag_pipeline.parsing.worker import WORKER_MEMORY_BYTES


def parser_version_for_name(uri: str) -> str:
    """The parser version a file of this name would be parsed with now ('' if unsupported)."""
    kind = KIND_BY_SUFFIX.get(file_suffix(uri))
    return parser_version_for(kind) if kind else ""


def parse_key(uri: str, limits: ParseLimits) -> str:
    # model_dump: the fields in declaration order with their own types (floats stay floats), so
    # the key is the one the dataclass gave before the limits became a pydantic model
    settings = json.dumps({**limits.model_dump(), "worker_memory_bytes": WORKER_MEMORY_BYTES}, sort_keys=True)
    digest = hashlib.sha256(settings.encode()).hexdigest()[:16]
    return f"{__version__}|{parser_version_for_name(uri) or 'unsupported'}|{digest}"
