"""What computing a chunk's section keys costs at staging: migration 022's SQL functions against
030's PL/pgSQL ones, in the same run on the same rows (issue 28: the stage step's share of an
initial sync).

Rows are chunk-like (section path, body) pairs from real documents: every Markdown and HTML
heading of evalsets/generalisation and the shared corpus with the heading above it as its
parent, and the text under it as the body. 022's definitions are created beside 030's as old_section_*
in a scratch database of an embedded server; each round times both over all rows (taking turns,
so a burst of load hits both), best of --rounds. Figures only; the equality of both is a test
(rag_pipeline_tests/retrieval/test_section_key_functions.py).

    python bench/bench_section_keys.py
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag_pipeline.store import database, migrations

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = [ROOT / "evalsets" / "generalisation" / "docs", ROOT.parent / "shared" / "corpus" / "docs"]
FUNCTIONS = ("rag_section_parts", "rag_section_key_set", "rag_section_label_keys", "rag_section_keys")


def rows() -> list[tuple[list[str], str]]:
    """(path, body) per heading: the heading under the one before it, and the text up to the next
    heading (Markdown '#' lines; HTML <h1>-<h6>, tags stripped)."""
    found = []
    for path in sorted(p for folder in FOLDERS for p in folder.rglob("*") if p.suffix in (".md", ".html", ".htm")):
        text = path.read_text(encoding="utf-8", errors="replace")[:3_000_000]
        if path.suffix == ".md":
            parts = re.split(r"(?m)^#{1,6}[ \t]+(.+)$", text)
        else:
            parts = [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", part)).strip()
                     for part in re.split(r"(?is)<h[1-6][^>]*>(.*?)</h[1-6]>", text)]
        parent = path.stem
        for heading, body in zip(parts[1::2], parts[2::2], strict=True):
            found.append(([parent, heading.strip()], body.strip()[:1500]))
            parent = heading.strip()
    return found


def old_definitions() -> list[str]:
    text = (ROOT / "sql" / "migrations" / "022_section_keys.sql").read_text(encoding="utf-8")
    out = []
    for name in FUNCTIONS:
        start = text.index(f"CREATE OR REPLACE FUNCTION {name}(")
        end = text.index("$$;", text.index("$$", start) + 2) + 3
        out.append(text[start:end].replace("rag_section_", "old_section_"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data = rows()
    paths, bodies = [p for p, _ in data], [b for _, b in data]
    with tempfile.TemporaryDirectory(prefix="rag-bench-keys-") as work:
        Path(work).chmod(0o755)
        url = database.embedded_url(Path(work) / "pgdata")
        try:
            with database.connect(url) as conn:
                migrations.migrate(conn)
                for statement in old_definitions():
                    conn.execute(statement)
                conn.execute("CREATE TEMP TABLE rows_ AS SELECT string_to_array(p, E'\\x1f') AS path, b AS body"
                             " FROM unnest(%s::text[], %s::text[]) AS u(p, b)", (["\x1f".join(p) for p in paths], bodies))
                best = {"022 (SQL)": float("inf"), "030 (PL/pgSQL)": float("inf")}
                for _ in range(args.rounds):
                    for label, function in (("022 (SQL)", "old_section_keys"), ("030 (PL/pgSQL)", "rag_section_keys")):
                        started = time.perf_counter()
                        conn.execute(f"SELECT count(*) FROM rows_ WHERE cardinality({function}(path, body)) >= 0")  # noqa: S608
                        best[label] = min(best[label], time.perf_counter() - started)
                numbered = conn.execute("SELECT count(*) FROM rows_ WHERE cardinality(rag_section_keys(path, body)) > 0"
                                        ).fetchone()[0]
        finally:
            database.stop_server(Path(work) / "pgdata")
    print(f"{len(data):,} chunk-like rows from {len(FOLDERS)} folders ({numbered:,} with a section key); best of {args.rounds}")
    print("| functions | ms per row |\n|---|---:|")
    for label, seconds in best.items():
        print(f"| {label} | {1000 * seconds / len(data):.3f} |")
    print(f"030 / 022: {best['030 (PL/pgSQL)'] / best['022 (SQL)']:.3f}")


if __name__ == "__main__":
    main()
