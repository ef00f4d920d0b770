"""Steps 2-5, per batch of work items: parse (in a killable worker), clean, chunk, embed.

Each step reads its input from the run's work items and writes its output back, so a step can
be retried or run on another machine; a file that fails is quarantined and the run goes on.

Each step splits into shards (sync.batches.Shard: one source, `shard_size` documents): the
`*_items` functions take one shard, or none for the whole run (every shard in turn, in this
process). A sharded run lists a step's shards with `step_shards`, runs each shard as a step of
its own, anywhere, and folds their results with `combine`. Every shard of parse must finish
before clean starts: notices are judged against every parsed document of the source.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from rag_pipeline import store
from rag_pipeline.chunking.chunks import chunk_elements, cleaned_text
from rag_pipeline.chunking.document_identity import document_identity
from rag_pipeline.cleaning.clean import clean_elements, make_safe
from rag_pipeline.cleaning.notices import document_fingerprints, is_notice
from rag_pipeline.embedding import Embedder
from rag_pipeline.parsing.pool import Job, ParsePool
from rag_pipeline.parsing.types import Element, ParsedDocument, ParseError
from rag_pipeline.store import text_search
from rag_pipeline.sync.batches import Shard, work_batches, work_shards
from rag_pipeline.sync.context import SyncContext
from rag_pipeline.sync.parse_key import parse_key

# Per-document detail a step returns for operators is capped: a run's result must not grow with
# the corpus (memory stays flat at 10,000 documents). Counters cover every document.
LISTED_WARNINGS = 200
LISTED_DOCUMENTS = 500


@dataclass
class ParseResult:
    counts: dict[str, int]  # parsed, quarantined, pages, ocr_pages, warning_count (all warnings)
    warnings: list[str] = field(default_factory=list)  # the first LISTED_WARNINGS "uri: warning" lines, by uri
    parsers: int = 0  # the most parser processes that worked side by side (in one step process)


@dataclass
class CleanResult:
    removed: dict[str, int]  # what was removed or redacted, by kind, over the run
    per_document: dict[str, dict[str, int]]  # the first LISTED_DOCUMENTS documents cleaned
    documents: int = 0  # documents cleaned, listed or not


@dataclass
class ChunkResult:
    counts: dict[str, int]  # documents, chunks, tokens


@dataclass
class EmbedResult:
    counts: dict[str, int]  # embedded (encoded now), reused (stored vectors of identical input)
    backend: dict[str, Any] | None = None  # which encoding backend encoded them and why (None: nothing encoded)


StepResult = ParseResult | CleanResult | ChunkResult | EmbedResult
# step -> the stage its items wait at, and its result type (results cross processes as dicts)
STEPS: dict[str, tuple[str, type]] = {
    "parse": ("planned", ParseResult), "clean": ("parsed", CleanResult),
    "chunk": ("cleaned", ChunkResult), "embed": ("chunked", EmbedResult),
}


def step_shards(ctx: SyncContext, step: str) -> list[Shard]:
    """The shards of one step of the run. Before parse, fingerprints of documents that are gone
    are dropped (once per run, before any shard parses: clean counts what is left)."""
    stage, _ = STEPS[step]
    with ctx.connect() as conn:
        if step == "parse":
            _drop_fingerprints_of_gone(ctx, conn)
        return work_shards(ctx, conn, stage)


def result_to_dict(result: StepResult) -> dict[str, Any]:
    return asdict(result)


def result_from_dict(step: str, data: dict[str, Any]) -> StepResult:
    return STEPS[step][1](**data)


def combine(ctx: SyncContext, step: str, results: list[StepResult]) -> StepResult:
    """The step's result over the run from its shards' results; parse and embed record their
    counts on the run (what the CLI and the runs list report)."""
    if step == "clean":
        removed: Counter = Counter()
        per_document: dict[str, dict[str, int]] = {}
        for r in results:
            removed.update(r.removed)
            for uri, found in r.per_document.items():
                if len(per_document) < LISTED_DOCUMENTS:
                    per_document[uri] = found
        return CleanResult(removed=dict(removed), per_document=per_document, documents=sum(r.documents for r in results))
    counts: Counter = Counter()
    for r in results:
        counts.update(r.counts)
    if step == "parse":
        combined: StepResult = ParseResult(counts=dict(counts),
                                           warnings=[w for r in results for w in r.warnings][:LISTED_WARNINGS],
                                           parsers=max((r.parsers for r in results), default=0))
    elif step == "embed":
        combined = EmbedResult(counts=dict(counts), backend=next((r.backend for r in results if r.backend), None))
    else:
        combined = STEPS[step][1](counts=dict(counts))
    if step in ("parse", "embed"):
        with ctx.connect() as conn:
            store.runs.update_run(conn, ctx.run_id, counts={step: dict(counts)})
    return combined


def _whole_run(ctx: SyncContext, step: str, shard_step: Callable[[Shard], StepResult]) -> Any:
    return combine(ctx, step, [shard_step(shard) for shard in step_shards(ctx, step)])


def parse_items(ctx: SyncContext, shard: Shard | None = None, pool: ParsePool | None = None,
                meanwhile: Callable[[], None] | None = None) -> ParseResult:
    """Parse planned items and record each document's paragraph fingerprints with it, so the
    clean step judges notices across the whole source; returns counts, pages and warnings.

    Files go to a pool of parser processes sized to the machine (`parse_workers`), which grows
    only when the shard's work outlasts a parser's start-up; this process reads the blobs and
    stores each result as it comes back, while the parsers go on.

    `meanwhile` runs in this process while the first parser imports its libraries (seconds
    that would otherwise pass idle here): the caller's chance to load what its next steps need.

    Secrets are redacted (and control characters neutralised) here, before anything of the
    document is stored: the work item and the fingerprints never hold text from before
    redaction, so neither a crashed run's leftovers nor a hash can give a secret away."""
    if pool is None:  # one pool for the whole call: start-ups are paid once
        with ParsePool(ctx.config.limits, ctx.config.parse_workers) as own:
            return parse_items(ctx, shard, own, meanwhile)
    if shard is None:
        shards = step_shards(ctx, "parse")
        return combine(ctx, "parse", [parse_items(ctx, s, pool, meanwhile if i == 0 else None)
                                      for i, s in enumerate(shards)])
    pool.start()
    if meanwhile is not None:
        meanwhile()
    counts: Counter = Counter()
    warnings: list[tuple[str, str]] = []
    with ctx.connect() as conn:
        results = pool.parse_all(_parse_jobs(ctx, conn, shard, counts), total=len(shard.uris))
        with closing(results):  # an error while storing stops the parsers at once
            for job, outcome in results:
                item = job.tag
                if isinstance(outcome, Exception):
                    _quarantine_failed(ctx, conn, item, outcome)
                    counts["quarantined"] += 1
                    continue
                wire = _redacted(outcome)
                fingerprints = document_fingerprints(ParsedDocument.from_dict(wire).elements)
                with conn.transaction():
                    store.work_items.advance_item(conn, ctx.run_id, item["source"], item["uri"], "parsed", "parsed", wire)
                    store.fingerprints.replace_fingerprints(conn, item["source"], item["uri"], fingerprints)
                counts["parsed"] += 1
                counts["pages"] += wire.get("page_count") or 0
                counts["ocr_pages"] += len(wire.get("ocr_pages") or [])
                for warning in wire.get("warnings") or []:
                    counts["warning_count"] += 1
                    warnings.append((item["uri"], warning))
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
                data = ctx.blobs.get(item["blob_sha256"])
            except OSError as exc:
                _quarantine_failed(ctx, conn, item, exc)
                counts["quarantined"] += 1
                continue
            yield Job(item, data, item["uri"])


def _quarantine_failed(ctx: SyncContext, conn, item: dict[str, Any], error: Exception) -> None:  # noqa: ANN001
    """Quarantine a file that did not parse. A ParseError is the parser's verdict on the file,
    kept with the parse key so an unchanged file is not parsed again only to fail the same way;
    an OSError (the blob could not be read, the parser's pipe failed) says nothing about the
    file, so the next run tries it again."""
    refused = isinstance(error, ParseError)
    stage = error.stage if refused else "read"
    key = parse_key(item["uri"], ctx.config.limits) if refused else None
    with conn.transaction():
        store.work_items.quarantine_item(conn, ctx.run_id, item["source"], item["uri"], stage, str(error), key)


def _redacted(wire: dict) -> dict:
    """The parsed document in wire form with secrets redacted; what was removed is kept under
    'safety' for the clean step's counts."""
    elements, safety = make_safe(ParsedDocument.from_dict(wire).elements)
    title = None
    if wire.get("title"):  # a title property is text from the file like any other
        titles, title_safety = make_safe([Element("paragraph", str(wire["title"]))])
        safety.update(title_safety)
        title = titles[0].text if titles else None
    return {**wire, "elements": [e.to_dict() for e in elements], "safety": dict(+safety), "title": title}


def _drop_fingerprints_of_gone(ctx: SyncContext, conn) -> None:  # noqa: ANN001
    gone = store.work_items.item_keys(conn, ctx.run_id, "planned", ("gone",))
    with conn.transaction():
        for source in {s for s, _ in gone}:
            store.fingerprints.drop_fingerprints(conn, source, [u for s, u in gone if s == source])


def clean_items(ctx: SyncContext, shard: Shard | None = None) -> CleanResult:
    """Clean each parsed document; notices are judged against the fingerprints every parsed
    document of the source recorded in the parse step (so parse must be done for every shard)."""
    if shard is None:
        return _whole_run(ctx, "clean", lambda s: clean_items(ctx, s))
    removed: Counter = Counter()
    per_document: dict[str, dict[str, int]] = {}
    documents = 0
    with ctx.connect() as conn:
        for batch in work_batches(ctx, conn, "parsed", ("parsed",), "clean", shard):
            for item in batch:
                parsed = ParsedDocument.from_dict(item["parsed"])
                elements, counts = clean_elements(parsed.elements, _notices(conn, item["source"], parsed.elements),
                                                  already_safe=True)
                counts.update(item["parsed"].get("safety") or {})
                removed.update(counts)
                documents += 1
                if len(per_document) < LISTED_DOCUMENTS:
                    per_document[item["uri"]] = dict(counts)
                if not any(e.text.strip() for e in elements):
                    with conn.transaction():
                        store.work_items.quarantine_item(
                            conn, ctx.run_id, item["source"], item["uri"], "clean",
                            "no text left after removing boilerplate; check the file has real content",
                        )
                    continue
                payload = {"elements": [e.to_dict() for e in elements], "parser": parsed.parser, "cleaning": dict(counts),
                           "title": parsed.title}
                with conn.transaction():
                    store.work_items.advance_item(conn, ctx.run_id, item["source"], item["uri"], "cleaned", "cleaned", payload)
    return CleanResult(removed=dict(removed), per_document=per_document, documents=documents)


def _notices(conn, source: str, elements: list[Element]) -> set[str]:  # noqa: ANN001
    fingerprints = document_fingerprints(elements)
    if not fingerprints:
        return set()
    counts, total = store.fingerprints.fingerprint_counts(conn, source, sorted(fingerprints))
    return {fp for fp, n in counts.items() if is_notice(n, total)}


def chunk_items(ctx: SyncContext, embedder: Embedder, shard: Shard | None = None) -> ChunkResult:
    if shard is None:
        return _whole_run(ctx, "chunk", lambda s: chunk_items(ctx, embedder, s))
    counts: Counter = Counter()
    with ctx.connect() as conn:
        for batch in work_batches(ctx, conn, "cleaned", ("cleaned",), "chunk", shard):
            for item in batch:
                cleaned = item["cleaned"]
                elements = [Element.from_dict(e) for e in cleaned["elements"]]
                identity = document_identity(cleaned.get("title"), elements, item["uri"])
                chunks = chunk_elements(elements, embedder.count_tokens, embedder.max_tokens, identity=identity)
                language = text_search.detect_language(cleaned_text(elements)[0])
                payload = {**cleaned, "elements": None, "chunks": [c.to_dict() for c in chunks], "language": language}
                with conn.transaction():
                    store.work_items.advance_item(conn, ctx.run_id, item["source"], item["uri"], "chunked", "chunks", payload)
                counts["documents"] += 1
                counts["chunks"] += len(chunks)
                counts["tokens"] += sum(c.token_count for c in chunks)
    return ChunkResult(counts=dict(counts))


def embed_items(ctx: SyncContext, embedder: Embedder, model_id: int, shard: Shard | None = None) -> EmbedResult:
    """Embed chunks, reusing stored vectors of identical model input under the same model."""
    if shard is None:
        return _whole_run(ctx, "embed", lambda s: embed_items(ctx, embedder, model_id, s))
    counts: Counter = Counter()
    with ctx.connect() as conn:
        for batch in work_batches(ctx, conn, "chunked", ("chunks",), "embed", shard):
            chunk_lists = [item["chunks"]["chunks"] for item in batch]
            hashes = [c["content_hash"] for chunks in chunk_lists for c in chunks]
            known = store.embeddings.find_embeddings(conn, hashes, model_id)
            missing = sorted({c["content_hash"]: c["search_text"] for cl in chunk_lists for c in cl
                              if c["content_hash"] not in known}.items())
            if missing:
                vectors = embedder.encode([text for _, text in missing])
                known.update({h: vectors[i] for i, (h, _) in enumerate(missing)})
            counts["embedded"] += len(missing)
            counts["reused"] += len(hashes) - len(missing)
            for item, chunks in zip(batch, chunk_lists):
                dim = embedder.identity.dimension
                matrix = np.stack([known[c["content_hash"]] for c in chunks]) if chunks else np.zeros((0, dim), np.float32)
                with conn.transaction():
                    store.work_items.advance_item(
                        conn, ctx.run_id, item["source"], item["uri"], "embedded", "embeddings",
                        matrix.astype(np.float32).tobytes(),
                    )
    backend = embedder.encoded_with.as_dict() if counts["embedded"] and embedder.encoded_with is not None else None
    return EmbedResult(counts=dict(counts), backend=backend)
