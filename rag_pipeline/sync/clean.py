"""Step 3, clean: running headers and footers, page numbers and notices repeated across the
source are removed from each parsed document (secrets were redacted at parse); a document with
no text left is quarantined. Notices are judged against the paragraph digests every parsed document
of the source recorded, so every parse shard must be done before the first clean shard."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from rag_pipeline import store
from rag_pipeline.cleaning.clean import clean_elements
from rag_pipeline.cleaning.notices import document_digests, is_notice
from rag_pipeline.parsing.types import Element
from rag_pipeline.sync.batches import Shard, stage_shards, work_batches
from rag_pipeline.sync.context import SyncContext
from rag_pipeline.sync.failures import naming
from rag_pipeline.sync.items import Cleaned

# The per-document table is capped: a run's result must not grow with the corpus. Counters
# cover every document.
LISTED_DOCUMENTS = 500


@dataclass
class CleanResult:
    removed: dict[str, int]  # what was removed or redacted, by kind, over the run
    per_document: dict[str, dict[str, int]]  # the first LISTED_DOCUMENTS documents cleaned
    documents: int = 0  # documents cleaned, listed or not

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CleanResult:
        return cls(removed=dict(data.get("removed") or {}), per_document=dict(data.get("per_document") or {}),
                   documents=int(data.get("documents") or 0))

    @classmethod
    def combine(cls, results: list[CleanResult]) -> CleanResult:
        """Over the run from its shards': what was removed adds up, the table keeps the first
        LISTED_DOCUMENTS documents, every document is counted."""
        removed: Counter = Counter()
        per_document: dict[str, dict[str, int]] = {}
        for r in results:
            removed.update(r.removed)
            for uri, found in r.per_document.items():
                if len(per_document) < LISTED_DOCUMENTS:
                    per_document[uri] = found
        return cls(removed=dict(removed), per_document=per_document, documents=sum(r.documents for r in results))


def shards(ctx: SyncContext) -> list[Shard]:
    return stage_shards(ctx, "parsed")


def finish(ctx: SyncContext, results: list[CleanResult]) -> CleanResult:
    return CleanResult.combine(results)


def clean_items(ctx: SyncContext, shard: Shard | None = None) -> CleanResult:
    """Clean each parsed document of the shard (or of every shard of the run in turn)."""
    if shard is None:
        return finish(ctx, [clean_items(ctx, s) for s in shards(ctx)])
    removed: Counter = Counter()
    per_document: dict[str, dict[str, int]] = {}
    documents = 0
    with ctx.connect() as conn:
        for batch in work_batches(ctx, conn, "parsed", ("parsed",), "clean", shard):
            for item in batch:
                parsed = item.parsed
                notices = _notices(conn, item.source, parsed.document.elements)
                with naming(item, "clean"):
                    elements, counts = clean_elements(parsed.document.elements, notices, already_safe=True)
                counts.update(parsed.safety)
                removed.update(counts)
                documents += 1
                if len(per_document) < LISTED_DOCUMENTS:
                    per_document[item.uri] = dict(counts)
                if not any(e.text.strip() for e in elements):
                    with conn.transaction():
                        store.work_items.quarantine_item(
                            conn, ctx.run_id, item.source, item.uri, "clean",
                            "no text left after removing boilerplate; check the file has real content",
                        )
                    continue
                cleaned = Cleaned(elements=elements, parser=parsed.document.parser, cleaning=dict(counts),
                                  title=parsed.document.title)
                with conn.transaction():
                    store.work_items.advance_item(conn, ctx.run_id, item.source, item.uri, "cleaned", "cleaned",
                                                  cleaned.to_dict())
    return CleanResult(removed=dict(removed), per_document=per_document, documents=documents)


def _notices(conn, source: str, elements: list[Element]) -> set[str]:  # noqa: ANN001
    digests = document_digests(elements)
    if not digests:
        return set()
    counts, total = store.paragraph_digests.digest_counts(conn, source, sorted(digests))
    return {fp for fp, n in counts.items() if is_notice(n, total)}
