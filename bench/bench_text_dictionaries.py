"""Czech questions with and without the Hunspell dictionaries (issue 23, item 2; migration 029).

Six documents of the shared corpus in four languages (the Czech law 270/2025, the aktualne.cz
article, and German, English and French distractors) are synced by the real pipeline into two
databases on one embedded server: `before` has the Czech and Slovak dictionary configurations
dropped before its sync (Czech indexed with simple_unaccent, as before 029), `after` has them.
Then evidence@3 and @10 (the evidence phrase inside a returned chunk, whitespace and soft hyphens
ignored) of Czech-language questions in full-text and hybrid + rerank modes: the 16 of
`bench/czech_questions.yaml` (written from the law's text before the first measurement, in other
cases and words than the text) and the Czech-language questions of `evalsets/corpus` on those
documents. Figures only.

    python bench/bench_text_dictionaries.py [--pgdata /tmp/rag-cz/pgdata]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import psycopg
import yaml
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from rag_pipeline import cli
from rag_pipeline.config import load_config
from rag_pipeline.embedding import embedder_for
from rag_pipeline.retrieval import search as retrieval
from rag_pipeline.store import database, migrations

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("RAG_CORPUS_DIR", ROOT.parent / "shared" / "corpus")) / "docs"
DOCS = ("pdf/cz_zakon_270-2025_novela_trestniho_zakoniku.pdf", "html/readability_aktualne_cz.source.html",
        "html/readability_heise_de.source.html", "html/readability_ietf_draft_remotestorage.source.html",
        "pdf/demolition_committee_minutes_2023-06-20_fr.pdf", "html/readability_wikipedia_mozilla_en.source.html")
MODES = ("fulltext", "hybrid+rerank")


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u00ad", "")).strip().lower()


def questions() -> dict[str, list[tuple[str, str]]]:
    own = [(q["q"], q["e"]) for q in yaml.safe_load((ROOT / "bench" / "czech_questions.yaml").read_text(encoding="utf-8"))]
    cases = yaml.safe_load((ROOT / "evalsets" / "corpus" / "eval.yaml").read_text(encoding="utf-8"))
    corpus = [(c["question"], c["expect_evidence"][0]) for c in cases
              if c.get("expect_source", "") in DOCS[:2] and "-en-" not in c["id"] and c.get("expect_evidence")]
    return {"bench/czech_questions.yaml": own, "evalsets/corpus (Czech)": corpus}


def synced(server: str, label: str, work: Path) -> str:
    name = f"bench_cz_{label}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(server)
    params["dbname"] = name
    url = make_conninfo(**params)
    with database.connect(url) as conn:
        migrations.migrate(conn)
        if label == "before":
            for cfg in ("rag_czech", "rag_slovak"):
                conn.execute(f"DROP TEXT SEARCH CONFIGURATION IF EXISTS {cfg}")
                conn.execute(f"DROP TEXT SEARCH DICTIONARY IF EXISTS {cfg}_ispell")
            conn.commit()
    root = work / label
    shutil.rmtree(root, ignore_errors=True)
    (root / "docs").mkdir(parents=True)
    for doc in DOCS:
        (root / "docs" / doc).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / doc, root / "docs" / doc)
    config = root / "rag_pipeline.yaml"
    config.write_text(yaml.safe_dump({"database_url": url, "state_dir": str(root / "state"), "sources": [
        {"name": "cz", "kind": "filesystem", "path": str(root / "docs"), "default_groups": ["all-staff"]}]}),
        encoding="utf-8")
    if cli.main(["sync", "--config", str(config), "--json"]) != 0:
        raise SystemExit(f"the {label} sync failed")
    return str(config)


def measure(config: str, sets: dict[str, list[tuple[str, str]]]) -> dict:
    loaded = load_config(Path(config))
    embedder = embedder_for(loaded.embedding)
    figures = {}
    with database.connect(loaded.database_url) as conn:
        figures["configs"] = dict(conn.execute("SELECT ts_config::text, count(*) FROM chunks GROUP BY 1").fetchall())
        for mode in MODES:
            for name, cases in sets.items():
                at3 = at10 = 0
                for question, evidence in cases:
                    hits = retrieval.search(conn, embedder, question, ["all-staff"], k=10, log=False, mode=mode)
                    ranks = [i for i, h in enumerate(hits) if _norm(evidence) in _norm(h.text)]
                    at3 += bool(ranks and ranks[0] < 3)
                    at10 += bool(ranks)
                figures[f"{mode} | {name}"] = (round(at3 / len(cases), 3), round(at10 / len(cases), 3), len(cases))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pgdata", type=Path, default=Path("/tmp/rag-cz/pgdata"))
    args = parser.parse_args()
    server = database.embedded_url(args.pgdata)
    sets = questions()
    results = {label: measure(synced(server, label, args.pgdata.parent), sets) for label in ("before", "after")}
    for label, figures in results.items():
        print(f"{label}: chunks per configuration {figures['configs']}")
    print("| mode | questions | n | before ev@3 | before ev@10 | after ev@3 | after ev@10 |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for key in (k for k in results["after"] if k != "configs"):
        mode, name = key.split(" | ")
        b, a = results["before"][key], results["after"][key]
        print(f"| {mode} | {name} | {a[2]} | {b[0]} | {b[1]} | {a[0]} | {a[1]} |")


if __name__ == "__main__":
    main()
