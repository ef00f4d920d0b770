"""Retrieval quality per search mode (vector, fulltext, hybrid, hybrid+rerank), measured
through the project's own chunker, store and search SQL (not a reimplementation of them), on
two sets:

1. BEIR SciFact (5,183 abstracts; qrels test split): nDCG@10, recall@10, recall@100, MRR@10.
   The abstracts are chunked by `rag_pipeline.chunking` (title = heading), embedded once by the
   packaged model and kept in a persistent embedded PostgreSQL (--state, default
   /tmp/rag-scifact): vectors are cached by content hash and the database is only reloaded
   (never re-encoded) when the schema or chunker changes (`--reload`). Tune on `--split train`;
   report on `test`. References: BEIR's BM25 (nDCG@10 0.665) and, from issue 8, the exact RRF
   of BM25 and the same model measured outside the project (0.679 / recall@100 0.954).
2. The project's own evaluation set, evalsets/corpus/eval.yaml, over the shared real documents,
   synced by the real `sync` job (Dagster, in process) into a second embedded PostgreSQL under
   --corpus-state (default /tmp/rag-corpus-eval; reruns only sync what changed): evidence recall
   @3/@10 (the chunk holding the answer), source recall @3/@10, nDCG@10 and MRR@10 of the
   answering chunk, and refusal accuracy for must-refuse and must-answer questions. Refusal
   (the first result's similarity + a coverage weight x its term coverage, rag_pipeline/retrieval/refusal.py)
   is calibrated per mode on the set's calibration split only, and beside it the similarity-only
   rule calibrated the same way (the "before"); every figure printed is measured on the report split.

3. Any other set under evalsets/ named in SETS (`--sets generalisation`: evalsets/generalisation,
   documents the method was never tuned on), synced from its own rag_pipeline.yaml into
   --corpus-state-<set>, with the same figures. For every set, the figures are also printed per
   class (the cases' `classes` labels: section, non-english, cross-lingual, paraphrase, refuse).

Prints one table per set and, at the end, all figures as one JSON document (also written to
--json-out when given).

    python bench/bench_retrieval.py                        # both sets, all modes
    python bench/bench_retrieval.py --sets corpus          # only the evaluation set
    python bench/bench_retrieval.py --sets corpus,generalisation   # both real-document sets, per class
    python bench/bench_retrieval.py --sets scifact --split train --modes fulltext
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np
import psycopg

from rag_pipeline import store
from rag_pipeline.chunking import chunks as chunking
from rag_pipeline.chunking.document_identity import document_identity
from rag_pipeline.embedding import load_embedder
from rag_pipeline.embedding.backends import AUTO
from rag_pipeline.embedding.config import EMBEDDING_BACKENDS
from rag_pipeline.parsing.types import Element
from rag_pipeline.retrieval import search as retrieval
from rag_pipeline.store import database, text_search

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("RAG_CORPUS_DIR", ROOT.parent / "shared" / "corpus"))
SCIFACT = CORPUS / "qa" / "scifact_beir"
GROUP = "public"
SOURCE = "scifact"
BM25_BEIR = 0.665
RRF_OUTSIDE = (0.679, 0.954)  # issue 8: exact RRF of BM25 and the same model, measured outside (nDCG@10, R@100)
EVALSET = ROOT / "evalsets" / "corpus"


def load_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        qid, doc, score = line.split("\t")
        qrels.setdefault(qid, {})[doc] = int(score)
    return qrels


def chunk_corpus(embedder, docs: list[dict], cache: Path | None = None) -> list[tuple[str, list[dict]]]:
    """Each abstract as the pipeline would chunk it: its title is the heading of its text (and so
    its identity line, which the chunker then leaves out as a repeat of the section path).
    Cached per chunker version (chunking 5,183 abstracts costs minutes on a busy machine)."""
    if cache is not None:
        cache = cache.with_name(f"{cache.stem}-{chunking.CHUNKER_VERSION}.json")
        if cache.exists():
            return [tuple(item) for item in json.loads(cache.read_text(encoding="utf-8"))]
    out = []
    for doc in docs:
        elements = [Element("heading", doc["title"], level=1), Element("paragraph", doc["text"])]
        if not doc["title"].strip():
            elements = elements[1:]
        identity = document_identity(None, elements, f"{doc['_id']}.md")  # as the chunk step derives it
        chunks = chunking.chunk_elements(elements, embedder.count_tokens, embedder.max_tokens, identity=identity)
        out.append((doc["_id"], [c.to_dict() for c in chunks]))
    if cache is not None:
        cache.write_text(json.dumps(out), encoding="utf-8")
    return out


def vector_cache_name(embedder) -> str:
    """The SciFact vector cache of the embedder's numeric format: vectors of another format (int8)
    are another model's and never read for this one."""
    numerics = embedder.identity.numerics
    return "vectors.npz" if numerics == "fp32" else f"vectors-{numerics}.npz"


def cached_vectors(embedder, texts: dict[str, str], cache: Path, *, encode: bool = True) -> dict[str, np.ndarray]:
    """Vectors by content hash; only texts never encoded before are encoded, and the cache is
    saved after every batch so an interrupted load loses at most one batch of work. With
    `encode=False` nothing is encoded (for full-text-only runs while vectors are still missing)."""
    known: dict[str, np.ndarray] = {}
    if cache.exists():
        data = np.load(cache)
        known = dict(zip(data["hashes"].tolist(), data["vectors"]))
    missing = [h for h in texts if h not in known]
    if missing and encode:
        print(f"encoding {len(missing):,} chunk texts (cached in {cache})", flush=True)
        started = time.perf_counter()
        for i in range(0, len(missing), 256):
            batch = missing[i : i + 256]
            for h, v in zip(batch, embedder.encode([texts[h] for h in batch])):
                known[h] = v
            hashes = sorted(known)
            np.savez(str(cache) + ".tmp.npz", hashes=np.array(hashes), vectors=np.stack([known[h] for h in hashes]))
            os.replace(str(cache) + ".tmp.npz", cache)
            print(f"  {min(i + 256, len(missing)):,}/{len(missing):,} in {time.perf_counter() - started:.0f}s", flush=True)
    return known


def ensure_database(server_url: str, name: str, reload: bool) -> tuple[str, bool]:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    with psycopg.connect(server_url, autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists and reload:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        if not exists or reload:
            admin.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(server_url)
    params["dbname"] = name
    return make_conninfo(**params), bool(not exists or reload)


def load_index(url: str, embedder, docs: list[dict], cache: Path, *, encode: bool = True) -> None:
    chunked = chunk_corpus(embedder, docs, cache.with_name("chunks.json"))
    texts = {c["content_hash"]: c["search_text"] for _, chunks in chunked for c in chunks}
    vectors = cached_vectors(embedder, texts, cache, encode=encode)
    missing = [h for h in texts if h not in vectors]
    if missing:
        print(f"WARNING: {len(missing):,} chunks have no vector yet (zero vectors): only fulltext figures mean anything")
        zero = np.zeros(embedder.identity.dimension, dtype=np.float32)
        zero[0] = 1.0
        vectors.update(dict.fromkeys(missing, zero))
    with database.connect(url) as conn:
        store.migrations.migrate(conn)
    with database.connect(url) as conn:
        model_id = store.models.register_model(conn, embedder.identity.to_dict())
        run_id = "scifact-load"
        store.runs.create_run(conn, run_id, [SOURCE], model_id)
        started = time.perf_counter()
        with conn.transaction():  # one commit for the whole load, not one per document
            for doc_id, chunks in chunked:
                stage_document(conn, run_id, model_id, doc_id, chunks, vectors)
        store.versions.publish(conn, run_id)
        print(f"loaded {len(chunked):,} documents in {time.perf_counter() - started:.0f}s", flush=True)


def stage_document(conn, run_id: str, model_id: int, doc_id: str, chunks: list[dict], vectors: dict) -> None:
    """One abstract staged as the sync's stage step would stage it (language detected per document)."""
    fields = {"model_id": model_id, "acl_groups": [GROUP], "chunker_version": chunking.CHUNKER_VERSION,
              "media_type": "text/plain", "checksum": doc_id,
              "language": text_search.detect_language("\n".join(c["text"] for c in chunks))}
    embeddings = np.stack([vectors[c["content_hash"]] for c in chunks])
    store.versions.stage_content_version(conn, run_id, SOURCE, doc_id, fields, chunks, embeddings)


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def evaluate(url: str, embedder, queries: dict[str, str], qrels: dict[str, dict[str, int]], mode: str, depth: int) -> dict[str, float]:
    totals = {"ndcg@10": 0.0, "recall@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}
    with database.connect(url) as conn:
        for qid, relevant in qrels.items():
            kwargs = {} if mode == "hybrid-legacy" else {"mode": mode}
            hits = retrieval.search(conn, embedder, queries[qid], [GROUP], k=depth, log=False, **kwargs)
            ranked: list[str] = []
            for hit in hits:  # document rank = rank of its best chunk
                if hit.uri not in ranked:
                    ranked.append(hit.uri)
            totals["ndcg@10"] += ndcg_at(ranked, relevant, 10)
            totals["recall@10"] += len(set(ranked[:10]) & set(relevant)) / len(relevant)
            totals["recall@100"] += len(set(ranked[:100]) & set(relevant)) / len(relevant)
            first = next((i for i, d in enumerate(ranked[:10]) if d in relevant), None)
            totals["mrr@10"] += 0.0 if first is None else 1.0 / (first + 1)
    return {k: v / len(qrels) for k, v in totals.items()}


SETS = {  # evaluation sets over real documents: folder under evalsets/ (rag_pipeline.yaml, eval.yaml)
    "corpus": EVALSET,
    "generalisation": ROOT / "evalsets" / "generalisation",
}


def corpus_config(state: Path, folder: Path = EVALSET, backend: str = AUTO) -> Path:
    """A set's rag_pipeline.yaml (evalsets/corpus's by default) as the benchmark syncs it: the
    same source (groups, deny patterns; evalsets/corpus's over CORPUS/docs, any other set's over
    its own folder), its state under `state`, the encoding backend (`--backend`; another numeric
    format is another model identity, so give it its own state), and no gate evaluation set (the
    benchmark evaluates every mode itself; the gate would only repeat the default mode)."""
    import yaml

    from rag_pipeline.config import load_config

    (source,) = load_config(folder / "rag_pipeline.yaml").sources
    docs = CORPUS / "docs" if folder == EVALSET else source.path
    state.mkdir(parents=True, exist_ok=True)
    path = state / "rag_pipeline.yaml"
    config: dict[str, object] = {
        "state_dir": str(state / "state"),
        "sources": [{"name": source.name, "kind": "filesystem", "path": str(docs),
                     "default_groups": list(source.default_groups), "deny": list(source.deny)}],
    }
    if backend != AUTO:
        config["embedding"] = {"backend": backend}
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def sync_corpus(state: Path, folder: Path = EVALSET, backend: str = AUTO) -> str:
    """Sync a set's documents with the real job; the database URL of the synced index."""
    from rag_pipeline.cli.runner import run_sync
    from rag_pipeline.config import load_config
    from rag_pipeline.sync.context import prepare_database

    config = load_config(corpus_config(state, folder, backend))
    started = time.perf_counter()
    outcome = run_sync(config, [], False)
    if outcome.status not in ("published", "nothing_to_do"):
        raise SystemExit(f"{folder.name} sync ended {outcome.status}: {outcome.error or outcome.gate_reason}")
    quarantined = ", ".join(sorted(q["uri"] for q in outcome.quarantined)) or "none"
    print(f"{folder.name} synced in {time.perf_counter() - started:.0f}s ({outcome.status}); quarantined: {quarantined}", flush=True)
    return prepare_database(config)


def evaluate_corpus(url: str, embedder, cases: list, mode: str, per_case: list | None = None) -> dict[str, float]:
    """The report split's figures for one mode, refusal calibrated on the calibration split.
    `per_case` (when given) receives one record per case: what `--cases-out` writes."""
    from rag_pipeline.evaluation.evaluate import in_calibration_split, score_case
    from rag_pipeline.retrieval import refusal

    never_refuse = refusal.Threshold(float("-inf"), "retrieval figures only")
    rows = []
    started = time.perf_counter()
    with database.connect(url) as conn:
        for case in cases:
            hits = retrieval.search(conn, embedder, case.question, list(case.groups), k=10, mode=mode, log=False)
            rows.append((case, score_case(case, hits[:3], never_refuse, set()), score_case(case, hits, never_refuse, set()),
                         refusal.evidence(hits)))
    rate = len(cases) / (time.perf_counter() - started)
    if per_case is not None:
        per_case.extend({"mode": mode, "id": c.id, "question": c.question, "split": c.split, "refuse": c.expect_refused,
                         "evidence@3": bool(top.evidence_hit), "evidence@10": bool(ten.evidence_hit),
                         "source@3": bool(top.source_hit), "source@10": bool(ten.source_hit),
                         "rank": ten.first_relevant_rank} for c, top, ten, _ in rows)
    calibration = [r for r in rows if in_calibration_split(r[0])]
    report = [r for r in rows if not in_calibration_split(r[0])]
    fitted = refusal.calibrate([e for c, _, _, e in calibration if not c.expect_refused],
                               [e for c, _, _, e in calibration if c.expect_refused])
    answered, refused = refusal.held_out_accuracies([e for c, _, _, e in report if not c.expect_refused],
                                                    [e for c, _, _, e in report if c.expect_refused], fitted)
    # the rule before the coverage weight, calibrated the same way: similarity alone
    similarity_only = refusal.calibrate([e for c, _, _, e in calibration if not c.expect_refused],
                                        [e for c, _, _, e in calibration if c.expect_refused], weights=(0.0,))
    sim_answered, sim_refused = refusal.held_out_accuracies([e for c, _, _, e in report if not c.expect_refused],
                                                            [e for c, _, _, e in report if c.expect_refused], similarity_only)
    answerable = [r for r in report if not r[0].expect_refused]

    def share(values: list) -> float:
        return sum(bool(v) for v in values) / len(values) if values else float("nan")

    with_evidence = [r for r in answerable if r[2].evidence_hit is not None]
    with_source = [r for r in answerable if r[2].source_hit is not None]
    ranks = [r[2].first_relevant_rank for r in answerable]
    classes: dict[str, dict[str, float]] = {}
    for name in sorted({k for r in report for k in r[0].classes} | {"all"}):
        members = [r for r in report if name == "all" or name in r[0].classes]
        answer = [r for r in members if not r[0].expect_refused]
        refuse = [r for r in members if r[0].expect_refused]
        ranked = [r[2].first_relevant_rank for r in answer]
        figures: dict[str, float] = {"n": len(members)}
        if answer:
            figures.update({
                "evidence@3": share([r[1].evidence_hit for r in answer if r[2].evidence_hit is not None]),
                "evidence@10": share([r[2].evidence_hit for r in answer if r[2].evidence_hit is not None]),
                "ndcg@10": sum(1 / math.log2(k + 1) for k in ranked if k) / len(ranked),
                "answer_acc": refusal.held_out_accuracies([e for *_, e in answer], [], fitted)[0],
            })
        if refuse:
            figures["refuse_acc"] = refusal.held_out_accuracies([], [e for *_, e in refuse], fitted)[1]
        classes[name] = figures
    return {
        "classes": classes,
        "evidence@3": share([r[1].evidence_hit for r in with_evidence]),
        "evidence@10": share([r[2].evidence_hit for r in with_evidence]),
        "source@3": share([r[1].source_hit for r in with_source]),
        "source@10": share([r[2].source_hit for r in with_source]),
        "ndcg@10": sum(1 / math.log2(k + 1) for k in ranks if k) / len(ranks),
        "mrr@10": sum(1 / k for k in ranks if k) / len(ranks),
        "refuse_acc": refused, "answer_acc": answered, "threshold": fitted.threshold,
        "coverage_weight": fitted.coverage_weight,
        "similarity_only": {"refuse_acc": sim_refused, "answer_acc": sim_answered, "threshold": similarity_only.threshold},
        "report_answer": len(answerable), "report_refuse": len(report) - len(answerable), "q/s": rate,
    }


def run_scifact(args: argparse.Namespace, embedder) -> dict[str, dict[str, float]]:
    args.state.mkdir(parents=True, exist_ok=True)
    args.state.chmod(0o755)
    server = database.embedded_url(args.state / "pgdata")
    url, fresh = ensure_database(server, args.database, args.reload)
    if fresh:
        load_index(url, embedder, load_jsonl(SCIFACT / "corpus.jsonl"), args.state / vector_cache_name(embedder),
                   encode=not args.no_encode)
    else:
        with database.connect(url) as conn:
            store.migrations.migrate(conn)
    queries = {q["_id"]: q["text"] for q in load_jsonl(SCIFACT / "queries.jsonl")}
    qrels = load_qrels(SCIFACT / "qrels" / f"{args.split}.tsv")
    if args.limit:
        qrels = dict(list(qrels.items())[: args.limit])
    print(f"\nSciFact {args.split}: {len(qrels)} queries; references: BEIR BM25 nDCG@10 {BM25_BEIR}, "
          f"RRF(BM25, same model) outside the project {RRF_OUTSIDE[0]} / R@100 {RRF_OUTSIDE[1]}")
    print(f"{'mode':<16}{'nDCG@10':>9}{'R@10':>8}{'R@100':>8}{'MRR@10':>8}{'q/s':>7}")
    results = {}
    for mode in args.modes.split(","):
        started = time.perf_counter()
        m = evaluate(url, embedder, queries, qrels, mode, args.depth)
        m["q/s"] = len(qrels) / (time.perf_counter() - started)
        results[mode] = m
        print(f"{mode:<16}{m['ndcg@10']:>9.3f}{m['recall@10']:>8.3f}{m['recall@100']:>8.3f}{m['mrr@10']:>8.3f}"
              f"{m['q/s']:>7.1f}", flush=True)
    if "hybrid+rerank" in results:
        m = results["hybrid+rerank"]
        print(f"targets: hybrid+rerank nDCG@10 >= 0.68: {m['ndcg@10']:.3f} {'met' if m['ndcg@10'] >= 0.68 else 'NOT met'}; "
              f"R@100 >= 0.95: {m['recall@100']:.3f} {'met' if m['recall@100'] >= 0.95 else 'NOT met'}")
    if "fulltext" in results:
        m = results["fulltext"]
        print(f"target: fulltext nDCG@10 >= 0.65: {m['ndcg@10']:.3f} {'met' if m['ndcg@10'] >= 0.65 else 'NOT met'}")
    return results


def run_corpus(args: argparse.Namespace, embedder, name: str = "corpus") -> dict[str, dict[str, float]]:
    from rag_pipeline.evaluation.evaluate import load_eval_set

    folder = SETS[name]
    eval_set = args.eval_set if name == "corpus" else folder / "eval.yaml"
    state = args.corpus_state if name == "corpus" else args.corpus_state.parent / f"{args.corpus_state.name}-{name}"
    cases = load_eval_set(eval_set)
    url = sync_corpus(state, folder, args.backend)
    per_case: list = []
    results = {mode: evaluate_corpus(url, embedder, cases, mode, per_case) for mode in args.modes.split(",")}
    if args.cases_out:  # every case's hits per mode: per-class figures are computed from these
        out = args.cases_out if name == "corpus" else args.cases_out.with_name(f"{args.cases_out.stem}-{name}{args.cases_out.suffix}")
        out.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in per_case) + "\n", encoding="utf-8")
    any_mode = next(iter(results.values()))
    print(f"\n{eval_set.relative_to(ROOT) if eval_set.is_relative_to(ROOT) else eval_set}: {len(cases)} cases; figures on the report split ({any_mode['report_answer']} must answer, "
          f"{any_mode['report_refuse']} must refuse); refusal threshold calibrated per mode on the calibration split")
    print(f"{'mode':<16}{'ev@3':>7}{'ev@10':>7}{'src@3':>7}{'src@10':>7}{'nDCG@10':>9}{'MRR@10':>8}"
          f"{'refuse':>8}{'answer':>8}{'thresh':>8}{'weight':>7}{'sim-only refuse/answer':>24}{'q/s':>6}")
    for mode, m in results.items():
        before = m["similarity_only"]
        print(f"{mode:<16}{m['evidence@3']:>7.3f}{m['evidence@10']:>7.3f}{m['source@3']:>7.3f}{m['source@10']:>7.3f}"
              f"{m['ndcg@10']:>9.3f}{m['mrr@10']:>8.3f}{m['refuse_acc']:>8.3f}{m['answer_acc']:>8.3f}"
              f"{m['threshold']:>8.3f}{m['coverage_weight']:>7.1f}"
              f"{before['refuse_acc']:>15.3f} / {before['answer_acc']:.3f}{m['q/s']:>6.1f}", flush=True)
    print_classes(results)
    return results


def print_classes(results: dict[str, dict]) -> None:
    """Per class (the cases' `classes` labels; cases without one count only in `all`), report
    split: evidence@3/@10 and nDCG@10 of the must-answer cases, and refusal accuracy (a class's
    must-refuse cases refused, its must-answer cases answered) at the mode's calibrated threshold."""
    def cell(m: dict, key: str) -> str:
        return f"{m[key]:>7.3f}" if key in m else f"{'-':>7}"

    print(f"\nper class (report split){'':<4}{'n':>4}{'ev@3':>7}{'ev@10':>7}{'nDCG':>7}{'refuse':>7}{'answer':>7}")
    for mode, m in results.items():
        for name, c in m["classes"].items():
            print(f"{mode:<16}{name:<12}{c['n']:>4}{cell(c, 'evidence@3')}{cell(c, 'evidence@10')}{cell(c, 'ndcg@10')}"
                  f"{cell(c, 'refuse_acc')}{cell(c, 'answer_acc')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="scifact,corpus",
                        help="scifact, corpus, generalisation (comma-separated); the last two sync their set's "
                             "documents into --corpus-state (corpus) and --corpus-state-<set> (others)")
    parser.add_argument("--state", type=Path, default=Path("/tmp/rag-scifact"))
    parser.add_argument("--corpus-state", type=Path, default=Path("/tmp/rag-corpus-eval"))
    parser.add_argument("--database", default="scifact")
    parser.add_argument("--split", choices=("test", "train"), default="test")
    parser.add_argument("--modes", default="vector,fulltext,hybrid,hybrid+rerank")
    parser.add_argument("--reload", action="store_true", help="drop and reload the SciFact index (vectors stay cached)")
    parser.add_argument("--no-encode", action="store_true", help="load without encoding missing vectors (fulltext only)")
    parser.add_argument("--limit", type=int, default=0, help="evaluate only the first N SciFact queries")
    parser.add_argument("--depth", type=int, default=150, help="chunks retrieved per query (>= 100 documents)")
    parser.add_argument("--json-out", type=Path, help="also write the JSON figures to this file")
    parser.add_argument("--eval-set", type=Path, default=EVALSET / "eval.yaml",
                        help="the evaluation set over the corpus documents (default: evalsets/corpus/eval.yaml)")
    parser.add_argument("--cases-out", type=Path, help="write each case's hits per mode (JSON lines) to this file")
    parser.add_argument("--backend", choices=EMBEDDING_BACKENDS, default=AUTO,
                        help="encoding backend of both sets (another numeric format, e.g. onnx-int8, is another "
                             "model: give it its own --database and --corpus-state)")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(2)  # the machine is shared: never more than two cores
    embedder = load_embedder(backend=args.backend)
    print(f"encoder: {embedder.choice.summary()}; model numerics {embedder.identity.numerics}", flush=True)
    sets = args.sets.split(",")
    figures: dict[str, object] = {"modes": args.modes.split(",")}
    if "scifact" in sets:
        figures["scifact"] = {"split": args.split, "results": run_scifact(args, embedder)}
    if "corpus" in sets:
        figures["corpus_eval"] = {"eval_set": str(args.eval_set), "figures_on": "report split",
                                  "results": run_corpus(args, embedder)}
    for name in (s for s in sets if s in SETS and s != "corpus"):
        figures[f"{name}_eval"] = {"eval_set": str(SETS[name] / "eval.yaml"), "figures_on": "report split",
                                   "results": run_corpus(args, embedder, name)}
    unknown = [s for s in sets if s != "scifact" and s not in SETS]
    if unknown:
        raise SystemExit(f"unknown sets {unknown}; choose from scifact, {', '.join(SETS)}")
    text = json.dumps(figures, indent=2, sort_keys=True)
    print(text)
    if args.json_out:
        args.json_out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
