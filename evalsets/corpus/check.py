"""Check the corpus evaluation set (eval.yaml next to this file) against the documents exactly
as the pipeline reads them: every referenced file is parsed in the sync's parse worker (same
limits), made safe, cleaned with corpus-wide notices and chunked with the packaged model's
tokenizer; every `expect_evidence` phrase must then occur in ONE chunk of its `expect_source`
document (after the evaluator's own normalisation), and every case must carry a valid split.

A phrase that straddles two chunks, or that OCR or cleaning reads differently, can never be
found by any search; this check catches it before a benchmark reports it as a retrieval miss.

    python evalsets/corpus/check.py                 # check; exit 1 on any problem
    python evalsets/corpus/check.py --dump /tmp/x   # also write each document's chunks as text
    python evalsets/corpus/check.py --config evalsets/generalisation/rag_pipeline.yaml
                                                    # another set: its config's one source, and the
                                                    # eval set it names (or --eval-set)

Parsed chunks are cached under $RAG_EVAL_CACHE (default /tmp/rag-corpus-eval-cache), keyed by
the file's SHA-256 and the parser, cleaner and chunker versions, so a rerun costs seconds.
The corpus is the source of rag_pipeline.yaml here (../shared/corpus/docs next to the checkout),
or $RAG_CORPUS_DIR/docs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from rag_pipeline.chunking.chunks import CHUNKER_VERSION, chunk_elements  # noqa: E402
from rag_pipeline.cleaning.clean import clean_elements, make_safe  # noqa: E402
from rag_pipeline.cleaning.notices import document_digests, is_notice  # noqa: E402
from rag_pipeline.config import Config, load_config  # noqa: E402
from rag_pipeline.evaluation.evaluate import EvalCase, evidence_in, load_eval_set  # noqa: E402
from rag_pipeline.parsing import KIND_BY_SUFFIX, ParseError, parser_version_for  # noqa: E402
from rag_pipeline.parsing.detect import file_suffix  # noqa: E402
from rag_pipeline.parsing.types import Element  # noqa: E402
from rag_pipeline.sources import SourceObject, open_source  # noqa: E402

EVAL_SET = HERE / "eval.yaml"
CONFIG = HERE / "rag_pipeline.yaml"
CACHE = Path(os.environ.get("RAG_EVAL_CACHE", "/tmp/rag-corpus-eval-cache"))
SPLITS = ("calibration", "report")


def eval_config(path: Path = CONFIG) -> Config:
    """This folder's config (or another set's, `path`); with RAG_CORPUS_DIR set (as for the
    tests), this folder's corpus source reads $RAG_CORPUS_DIR/docs instead of
    ../shared/corpus/docs next to the checkout."""
    config = load_config(path)
    if os.environ.get("RAG_CORPUS_DIR") and Path(path).resolve() == CONFIG:
        docs = Path(os.environ["RAG_CORPUS_DIR"]) / "docs"
        config = replace(config, sources=tuple(replace(s, path=docs) for s in config.sources))
    return config


def indexable(config: Config) -> tuple[Path, list[str]]:
    """The corpus folder and the URIs a sync of it lists (deny patterns applied) that a parser
    exists for; the rest is quarantined by a sync and answers nothing."""
    (source,) = config.sources
    listed = open_source(source).list_objects()
    uris = [o.uri for o in listed if isinstance(o, SourceObject) and file_suffix(o.uri) in KIND_BY_SUFFIX]
    assert source.path is not None
    return source.path, uris


def _parsed(docs: Path, uris: list[str]) -> dict[str, dict]:
    """Each document parsed and made safe (wire form), from the cache or the parse worker."""
    from rag_pipeline.parsing.worker import ParseWorker

    CACHE.mkdir(parents=True, exist_ok=True)
    out: dict[str, dict] = {}
    worker = None
    try:
        for uri in uris:
            data = (docs / uri).read_bytes()
            kind = KIND_BY_SUFFIX[file_suffix(uri)]
            key = hashlib.sha256(data + parser_version_for(kind).encode()).hexdigest()
            cached = CACHE / f"parsed-{key}.json"
            if cached.exists():
                out[uri] = json.loads(cached.read_text(encoding="utf-8"))
                continue
            worker = worker or ParseWorker().__enter__()
            started = time.process_time(), time.perf_counter()
            try:
                wire = worker.parse(data, uri)
            except ParseError as exc:
                wire = {"error": f"{exc.stage}: {exc}"}
            else:
                elements, _ = make_safe([Element.from_dict(e) for e in wire["elements"]])
                wire = {**wire, "elements": [e.to_dict() for e in elements]}
            wire["seconds"] = round(time.perf_counter() - started[1], 1)
            print(f"parsed {uri} in {wire['seconds']}s{' (FAILED)' if 'error' in wire else ''}", flush=True)
            cached.write_text(json.dumps(wire), encoding="utf-8")
            out[uri] = wire
    finally:
        if worker is not None:
            worker.__exit__(None, None, None)
    return out


def document_chunks(config: Config) -> dict[str, list[dict]]:
    """URI -> chunks (text, section_path, pages) of every indexable document, as a sync of the
    whole folder as one source would store them; a document that fails to parse maps to []."""
    from rag_pipeline.embedding import load_embedder

    docs, uris = indexable(config)
    parsed = _parsed(docs, uris)
    ok = {u: [Element.from_dict(e) for e in w["elements"]] for u, w in parsed.items() if "error" not in w}
    counts = Counter(fp for elements in ok.values() for fp in document_digests(elements))
    notices = {fp for fp, n in counts.items() if is_notice(n, len(ok))}
    key = hashlib.sha256(json.dumps([sorted(parsed), CHUNKER_VERSION, sorted(notices)]).encode()).hexdigest()
    key = hashlib.sha256((key + "".join(json.dumps(parsed[u].get("elements")) for u in sorted(parsed))).encode()).hexdigest()
    cached = CACHE / f"chunks-{CHUNKER_VERSION}-{key[:24]}.json"
    if cached.exists():
        return json.loads(cached.read_text(encoding="utf-8"))
    embedder = load_embedder()
    out: dict[str, list[dict]] = {u: [] for u in parsed}
    for uri, elements in ok.items():
        cleaned, _ = clean_elements(elements, notices, already_safe=True)
        chunks = chunk_elements(cleaned, embedder.count_tokens, embedder.max_tokens)
        out[uri] = [{"text": c.text, "section_path": c.section_path, "pages": [c.page_start, c.page_end]} for c in chunks]
    cached.write_text(json.dumps(out), encoding="utf-8")
    return out


def check(cases: list[EvalCase], chunks: dict[str, list[dict]]) -> list[str]:
    """Every problem that would make a case unanswerable or the split meaningless."""
    problems = []
    for case in cases:
        if case.split not in SPLITS:
            problems.append(f"{case.id}: split must be one of {SPLITS}, got {case.split!r}")
        if case.expect_refused:
            continue
        if case.expect_source is not None and case.expect_source not in chunks:
            problems.append(f"{case.id}: source {case.expect_source!r} is not an indexable corpus document")
            continue
        where = [case.expect_source] if case.expect_source else sorted(chunks)  # evidence alone: any document
        texts = [c["text"] for uri in where for c in chunks[uri]]
        if not texts:
            problems.append(f"{case.id}: {case.expect_source} yields no chunks (parse failed?)")
        if case.expect_evidence and not any(evidence_in(case.expect_evidence, t) for t in texts):
            problems.append(f"{case.id}: evidence {list(case.expect_evidence)} not in any one chunk of {', '.join(where)}")
        sections = [c["section_path"] for uri in where for c in chunks[uri]]
        if case.expect_section and not any(case.expect_section in path for path in sections):
            problems.append(f"{case.id}: no chunk of {case.expect_source} has section {case.expect_section!r}")
    for split in SPLITS:
        part = [c for c in cases if c.split == split]
        refuse = sum(c.expect_refused for c in part)
        if not part or not refuse or refuse == len(part):
            problems.append(f"split {split}: needs must-answer and must-refuse cases ({len(part)} cases, {refuse} refuse)")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=CONFIG,
                        help="the set's rag_pipeline.yaml (one source); default: evalsets/corpus's")
    parser.add_argument("--eval-set", type=Path,
                        help="default: the config's evaluation.eval_set, else eval.yaml next to this file")
    parser.add_argument("--dump", type=Path, help="write each document's chunks to this folder (for writing questions)")
    args = parser.parse_args(argv)
    config = eval_config(args.config.resolve())
    if args.eval_set is None:
        named = config.evaluation.eval_set if config.evaluation else None
        args.eval_set = Path(named) if named else EVAL_SET
    chunks = document_chunks(config)
    if args.dump:
        args.dump.mkdir(parents=True, exist_ok=True)
        for uri, items in chunks.items():
            lines = [f"### chunk {i} {c['section_path']} pages {c['pages']}\n{c['text']}\n" for i, c in enumerate(items)]
            (args.dump / (uri.replace("/", "__") + ".txt")).write_text("\n".join(lines), encoding="utf-8")
        print(f"wrote {len(chunks)} documents' chunks to {args.dump}")
    if not args.eval_set.exists():
        return 0
    cases = load_eval_set(args.eval_set)
    problems = check(cases, chunks)
    for problem in problems:
        print("PROBLEM:", problem, file=sys.stderr)
    refused = sum(c.expect_refused for c in cases)
    print(f"{len(cases)} cases ({refused} must refuse; splits {dict(Counter(c.split for c in cases))}): "
          f"{'all evidence found verbatim in one chunk' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
