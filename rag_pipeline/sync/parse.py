"""Step 2, parse: each planned document's blob through a parser process (killable, in a pool),
redacted at once, stored with the paragraph digests clean judges notices by; a file that
fails is quarantined and the run goes on. Sharded like clean, chunk and embed (sync/steps.py);
every parse shard must finish before clean starts: notices are judged against every parsed
document of the source."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from rag_pipeline import store
from rag_pipeline.cleaning.clean import make_safe
from rag_pipeline.cleaning.notices import document_digests
from rag_pipeline.cleaning.safety.keys import holds_private_key
from rag_pipeline.parsing.pool import Job, ParsePool
from rag_pipeline.parsing.types import Element, ParsedDocument, ParseError
from rag_pipeline.sync.batches import Shard, work_batches, work_shards
from rag_pipeline.sync.context import SyncContext
from rag_pipeline.sync.counts import Counts
from rag_pipeline.sync.items import Parsed, WorkItem
from rag_pipeline.sync.parse_key import parse_key

# Per-document detail a step returns for operators is capped: a run's result must not grow with
# the corpus (memory stays flat at 10,000 documents). Counters cover every document.
LISTED_WARNINGS = 200


@dataclass
class ParseResult:
    counts: dict[str, int]  # parsed, quarantined, pages, ocr_pages, warning_count (all warnings)
    warnings: list[str] = field(default_factory=list)  # the first LISTED_WARNINGS "uri: warning" lines, by uri
    parsers: int = 0  # the most parser processes that worked side by side (in one step process)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ParseResult:
        return cls(counts=dict(data.get("counts") or {}), warnings=list(data.get("warnings") or []),
                   parsers=int(data.get("parsers") or 0))

    @classmethod
    def combine(cls, results: list[ParseResult]) -> ParseResult:
        """Over the run from its shards': counts add up, warnings keep the first listed, and
        the most parsers of any one shard."""
        return cls(counts=Counts.summed(results), warnings=[w for r in results for w in r.warnings][:LISTED_WARNINGS],
                   parsers=max((r.parsers for r in results), default=0))


def shards(ctx: SyncContext) -> list[Shard]:
    """The step's shards. Paragraph digests of documents that are gone are dropped first (once per
    run, before any shard parses: clean counts what is left)."""
    with ctx.connect() as conn:
        _drop_digests_of_gone(ctx, conn)
        return work_shards(ctx, conn, "planned")


def finish(ctx: SyncContext, results: list[ParseResult]) -> ParseResult:
    """The step's result over the run, its counts recorded on the run (what the CLI and the runs list report)."""
    combined = ParseResult.combine(results)
    ctx.record_counts("parse", combined.counts)
    return combined


def parse_items(ctx: SyncContext, shard: Shard | None = None, pool: ParsePool | None = None,
                meanwhile: Callable[[], None] | None = None) -> ParseResult:
    """Parse planned items (one shard, or every shard of the run in turn) and record each
    document's paragraph digests with it, so the clean step judges notices across the
    whole source; returns counts, pages and warnings.

    Files go to a pool of parser processes sized to the machine (`parse_workers`), which grows
    only when the shard's work outlasts a parser's start-up; this process reads the blobs and
    stores each result as it comes back, while the parsers go on.

    `meanwhile` runs in this process while the first parser imports its libraries (seconds
    that would otherwise pass idle here): the caller's chance to load what its next steps need.

    Secrets are redacted (and control characters neutralised) here, before anything of the
    document is stored: the work item and the digests never hold text from before
    redaction, so neither a crashed run's leftovers nor a hash can give a secret away."""
    if pool is None:  # one pool for the whole call: start-ups are paid once
        with ParsePool(ctx.config.limits, ctx.config.parse_workers) as own:
            return parse_items(ctx, shard, own, meanwhile)
    if shard is None:
        return finish(ctx, [parse_items(ctx, s, pool, meanwhile if i == 0 else None)
                            for i, s in enumerate(shards(ctx))])
    pool.start()
    if meanwhile is not None:
        meanwhile()
    counts: Counter = Counter()
    warnings: list[tuple[str, str]] = []
    with ctx.connect() as conn:
        results = pool.parse_all(_parse_jobs(ctx, conn, shard, counts), total=len(shard.uris))
        with closing(results):  # an error while storing stops the parsers at once
            for job, outcome in results:
                item: WorkItem = job.tag
                if isinstance(outcome, Exception):
                    _quarantine_failed(ctx, conn, item, outcome, job.data)
                    counts["quarantined"] += 1
                    continue
                parsed = redacted(ParsedDocument.from_dict(outcome))
                digests = document_digests(parsed.document.elements)
                with conn.transaction():
                    store.work_items.advance_item(conn, ctx.run_id, item.source, item.uri, "parsed", "parsed", parsed.to_dict())
                    store.paragraph_digests.replace_digests(conn, item.source, item.uri, digests)
                counts["parsed"] += 1
                counts["pages"] += parsed.document.page_count or 0
                counts["ocr_pages"] += len(parsed.document.ocr_pages)
                for warning in parsed.document.warnings:
                    counts["warning_count"] += 1
                    warnings.append((item.uri, warning))
                if len(warnings) > 2 * LISTED_WARNINGS:  # bounded, and the same ones whatever order files finish in
                    warnings = sorted(warnings)[:LISTED_WARNINGS]
    return ParseResult(counts=dict(counts), warnings=[f"{uri}: {w}" for uri, w in sorted(warnings)[:LISTED_WARNINGS]],
                       parsers=pool.most_workers)


def _parse_jobs(ctx: SyncContext, conn, shard: Shard, counts: Counter) -> Iterator[Job]:  # noqa: ANN001
    """The shard's planned files, read from the blob store one at a time as the pool asks; a
    blob that cannot be read is quarantined at stage "read" here and never reaches a parser."""
    for batch in work_batches(ctx, conn, "planned", (), "parse", shard):
        for item in batch:
            try:
                data = ctx.blobs.get(item.blob_sha256 or "")
            except OSError as exc:
                _quarantine_failed(ctx, conn, item, exc)
                counts["quarantined"] += 1
                continue
            yield Job(item, data, item.uri)


def _quarantine_failed(ctx: SyncContext, conn, item: WorkItem, error: Exception,  # noqa: ANN001
                       data: bytes | None = None) -> None:
    """Quarantine a file that did not parse. A ParseError is the parser's verdict on the file,
    kept with the parse key so an unchanged file is not parsed again only to fail the same way;
    an OSError (the blob could not be read, the parser's pipe failed) says nothing about the
    file, so the next run tries it again.

    A refused file's bytes were never redacted, so one holding a private key is not kept: its
    blob is deleted (unless a document version or another running item uses the same bytes)
    before the quarantine is recorded. Should the delete fail, nothing is recorded and the next
    run reads, refuses and deletes again; once recorded, unchanged bytes are never read again."""
    refused = isinstance(error, ParseError)
    stage = error.stage if refused else "read"
    key = parse_key(item.uri, ctx.config.limits) if refused else None
    message = str(error)
    dropped = refused and data is not None and item.blob_sha256 is not None and holds_private_key(data)
    if dropped and store.work_items.blob_still_needed(conn, item.blob_sha256, ctx.run_id, item.source, item.uri):
        dropped = False
        message += " (the file holds a private key; its bytes are kept only for the version that shares them)"
    elif dropped:
        ctx.blobs.delete(item.blob_sha256)
        message += " (the file holds a private key: its bytes are not kept)"
    with conn.transaction():
        store.work_items.quarantine_item(conn, ctx.run_id, item.source, item.uri, stage, message, key)
        if dropped:
            store.work_items.forget_blob(conn, ctx.run_id, item.source, item.uri)


def redacted(document: ParsedDocument) -> Parsed:
    """The parsed document with secrets redacted (and control characters neutralised); what
    was removed is kept as `safety` for the clean step's counts."""
    elements, safety = make_safe(document.elements)
    title = None
    if document.title:  # a title property is text from the file like any other
        titles, title_safety = make_safe([Element("paragraph", str(document.title))])
        safety.update(title_safety)
        title = titles[0].text if titles else None
    return Parsed(document=replace(document, elements=elements, title=title), safety=dict(+safety))


def _drop_digests_of_gone(ctx: SyncContext, conn) -> None:  # noqa: ANN001
    gone = store.work_items.item_keys(conn, ctx.run_id, "planned", ("gone",))
    with conn.transaction():
        for source in {s for s, _ in gone}:
            store.paragraph_digests.drop_digests(conn, source, [u for s, u in gone if s == source])
