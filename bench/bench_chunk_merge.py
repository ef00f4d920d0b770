"""Evidence before and after a chunker change, on the project's own sets (issue 28, item 2).

Syncs the shared corpus with the real `sync` job (as bench_retrieval.py does) into a state
folder, then scores evalsets/corpus/eval.yaml (report split and all cases) and
evalsets/sections/eval.yaml (all report split) per search mode: evidence@3, evidence@10 and
source@3 of the answerable cases, and the number of chunks (texts encoded) of the index. No
refusal calibration: the sections set has no calibration split, and merging changes which text
a chunk holds, not the refusal rule.

Run it once per tree with the same arguments, e.g. before with the tree of main and after
with this branch (separate state folders, or the same one: a chunker version change reparses
and re-chunks every document and encodes only the chunks whose model input is new):

    PYTHONPATH=/path/to/main python bench/bench_chunk_merge.py --state /tmp/merge-before --json-out before.json
    PYTHONPATH=. python bench/bench_chunk_merge.py --state /tmp/merge-after --json-out after.json
    python bench/bench_chunk_merge.py --compare before.json after.json

`--compare` prints both runs side by side with the differences and the cases whose evidence@3
changed. `--count FOLDER` only chunks the Markdown and plain-text files under a folder (no
database, no encoding) and prints the number of chunks and their tokens; `--generated N` does so
for bench/generated_corpus.py's corpus of N documents (x 3 sections):

    python bench/bench_chunk_merge.py --generated 200
    python bench/bench_chunk_merge.py --count ../shared/corpus/docs
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parent.parent
SETS = {"corpus": ROOT / "evalsets" / "corpus" / "eval.yaml", "sections": ROOT / "evalsets" / "sections" / "eval.yaml"}


def score(url: str, embedder, cases: list, mode: str) -> tuple[dict[str, float], dict[str, bool]]:
    """evidence@3/@10 and source@3 over the answerable cases (report split, and all), and each
    case's evidence@3 (for the comparison)."""
    from rag_pipeline.evaluation.evaluate import in_calibration_split, score_case
    from rag_pipeline.retrieval import refusal
    from rag_pipeline.retrieval import search as retrieval
    from rag_pipeline.store import database

    never = refusal.Threshold(float("-inf"), "retrieval figures only")
    rows = []
    with database.connect(url) as conn:
        for case in cases:
            if case.expect_refused or not case.expect_evidence:
                continue
            hits = retrieval.search(conn, embedder, case.question, list(case.groups), k=10, mode=mode, log=False)
            rows.append((case, score_case(case, hits[:3], never, set()), score_case(case, hits, never, set())))

    def share(selected: list) -> float:
        return sum(bool(v) for v in selected) / len(selected) if selected else float("nan")

    report = [r for r in rows if not in_calibration_split(r[0])]
    figures = {"evidence@3": share([r[1].evidence_hit for r in report]),
               "evidence@10": share([r[2].evidence_hit for r in report]),
               "source@3": share([r[1].source_hit for r in report]),
               "evidence@3_all": share([r[1].evidence_hit for r in rows]),
               "cases_report": len(report), "cases_all": len(rows)}
    return figures, {r[0].id: bool(r[1].evidence_hit) for r in rows}


def chunk_count(url: str) -> dict[str, int]:
    """Chunks and documents of the live index: the texts a first sync encodes."""
    from rag_pipeline.store import database

    with database.connect(url) as conn:
        chunks, docs = conn.execute(
            "SELECT count(*), count(DISTINCT v.id) FROM chunks c JOIN document_versions v ON v.id = c.version_id"
            " WHERE v.status = 'live'").fetchone()
    return {"chunks": chunks, "documents": docs}


def run(args: argparse.Namespace) -> dict:
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_retrieval import sync_corpus

    from rag_pipeline.chunking.chunks import CHUNKER_VERSION
    from rag_pipeline.embedding import load_embedder
    from rag_pipeline.evaluation.evaluate import load_eval_set

    torch.set_num_threads(2)  # the machine is shared
    embedder = load_embedder()
    started = time.perf_counter()
    url = sync_corpus(args.state)
    out: dict = {"chunker_version": CHUNKER_VERSION, "sync_s": round(time.perf_counter() - started, 1),
                 "index": chunk_count(url), "sets": {}, "cases": {}}
    print(f"chunker {CHUNKER_VERSION}: {out['index']}", flush=True)
    for name in args.sets.split(","):
        cases = load_eval_set(SETS[name])
        for mode in args.modes.split(","):
            figures, per_case = score(url, embedder, cases, mode)
            out["sets"][f"{name}/{mode}"] = figures
            out["cases"][f"{name}/{mode}"] = per_case
            print(f"{name:<9}{mode:<15}" + "  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                                   for k, v in figures.items()), flush=True)
    return out


def count_chunks(folder: Path) -> dict[str, float]:
    """Parse, clean and chunk every .md/.markdown/.txt file under `folder` as the sync would:
    the texts a first sync of those files encodes, and their tokens."""
    from rag_pipeline.chunking.chunks import CHUNKER_VERSION, chunk_elements
    from rag_pipeline.chunking.document_identity import document_identity
    from rag_pipeline.cleaning.clean import clean_elements
    from rag_pipeline.embedding import load_embedder
    from rag_pipeline.parsing import parse_document

    embedder = load_embedder()
    files = sorted(p for p in folder.rglob("*") if p.suffix.lower() in (".md", ".markdown", ".txt") and p.is_file())
    tokens: list[int] = []
    for path in files:
        parsed = parse_document(path.read_bytes(), path.name)
        elements, _ = clean_elements(parsed.elements)
        identity = document_identity(parsed.title, elements, path.name)
        tokens += [c.token_count for c in chunk_elements(elements, embedder.count_tokens, embedder.max_tokens,
                                                         identity=identity)]
    out = {"chunker_version": CHUNKER_VERSION, "files": len(files), "chunks": len(tokens),
           "tokens": sum(tokens), "mean_tokens": sum(tokens) / max(1, len(tokens))}
    print(json.dumps(out), flush=True)
    return out


def compare(before_path: Path, after_path: Path) -> None:
    before = json.loads(before_path.read_text(encoding="utf-8"))
    after = json.loads(after_path.read_text(encoding="utf-8"))
    print(f"chunker {before['chunker_version']} -> {after['chunker_version']}")
    print(f"chunks {before['index']['chunks']:,} -> {after['index']['chunks']:,} "
          f"({after['index']['chunks'] / before['index']['chunks']:.2f}x); documents "
          f"{before['index']['documents']} -> {after['index']['documents']}")
    for key, b in before["sets"].items():
        a = after["sets"].get(key)
        if a is None:
            continue
        print(f"{key:<25}" + "  ".join(f"{m} {b[m]:.3f} -> {a[m]:.3f} ({a[m] - b[m]:+.3f})"
                                       for m in ("evidence@3", "evidence@10", "source@3", "evidence@3_all")))
        lost = sorted(c for c, hit in before["cases"][key].items() if hit and not after["cases"][key].get(c))
        won = sorted(c for c, hit in after["cases"][key].items() if hit and not before["cases"][key].get(c))
        print(f"{'':<25}evidence@3 lost: {', '.join(lost) or 'none'}; won: {', '.join(won) or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--state", type=Path, default=Path("/tmp/rag-merge-eval"))
    parser.add_argument("--sets", default="corpus,sections")
    parser.add_argument("--modes", default="hybrid+rerank,vector")
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--count", type=Path, metavar="FOLDER", help="only count chunks of its .md/.txt files")
    parser.add_argument("--generated", type=int, metavar="N", help="only count chunks of the generated corpus")
    args = parser.parse_args()
    if args.generated:
        import tempfile

        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import generated_corpus

        with tempfile.TemporaryDirectory() as folder:
            generated_corpus.write_corpus(Path(folder), args.generated)
            count_chunks(Path(folder))
        return
    if args.count:
        count_chunks(args.count)
        return
    if args.compare:
        compare(*args.compare)
        return
    out = run(args)
    if args.json_out:
        args.json_out.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
