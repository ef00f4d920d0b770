"""`python -m rag_pipeline.embedding.prepare`: the machine's one-off encoder work, done by
`make setup` instead of by the first sync a user runs.

The first encode on a machine measures which backend is fastest here among those whose vectors
equal torch fp32 (backend_choice.py), exporting the ONNX graph it measures (onnx_backend.py) and
importing torch to do both. Every later process reads the result from the user's cache. Paid by
the first sync, it was about 11 s (2 cores) of the 40 s by which a fresh machine's first sync of
200 documents trailed its second (93 s against 53 s, bench/README.md, session 36). Setup
prepares the default configuration's model and backend. A configuration naming another model or
backend is prepared by its first sync, as before, and a cache cleared later is filled again the
same way.
"""

from __future__ import annotations

import sys
import time

from rag_pipeline.embedding.config import EmbeddingConfig
from rag_pipeline.embedding.encoder import embedder_for
from rag_pipeline.errors import PipelineError


def prepare(section: EmbeddingConfig) -> str:
    """Measure (or find remembered) the backend choice for `section` and load its encoder; a
    line saying what was chosen, why, and how long it took."""
    started = time.perf_counter()
    embedder = embedder_for(section)
    embedder.warm()
    choice = embedder.choice
    rates = ", ".join(f"{name} {rate:.0f}" for name, rate in sorted(choice.rates.items())) or "not measured"
    return (f"encoder ready for {embedder.name}: {choice.backend} ({choice.reason}; texts/s {rates}) "
            f"in {time.perf_counter() - started:.1f} s")


def main(section: EmbeddingConfig | None = None) -> int:
    """The default model and backend (`section`: another embedding configuration's)."""
    try:
        print(prepare(section or EmbeddingConfig()))
    except PipelineError as exc:
        print(f"encoder not prepared: {exc}; the first sync will prepare it", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
