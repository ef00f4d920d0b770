"""Migration 030 rewrote migration 022's section-key functions in PL/pgSQL for speed (staging
computes them for every chunk). The expression index chunks_section_keys was built with 022's
definitions and is not rebuilt, so the new ones must return exactly what the old ones did, for
every input: here both run side by side on real headings (the Debian Policy chapters, the
constitution, Czech/German/French man pages, the shared corpus' Markdown), every keyword x number
x separator combination, and hostile text."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import psycopg
import pytest
from test_section_refs import HEADINGS, NOT_NUMBERED

from rag_pipeline.store import database

ROOT = Path(__file__).resolve().parents[2]
OLD = ROOT / "sql" / "migrations" / "022_section_keys.sql"
FUNCTIONS = ("rag_section_parts", "rag_section_key_set", "rag_section_label_keys", "rag_section_keys")


def _old_definitions() -> list[str]:
    """022's CREATE FUNCTION statements for the key functions, renamed old_section_*."""
    text = OLD.read_text(encoding="utf-8")
    statements = []
    for name in FUNCTIONS:
        start = text.index(f"CREATE OR REPLACE FUNCTION {name}(")
        end = text.index("$$;", text.index("$$", start) + 2) + 3
        statements.append(text[start:end].replace("rag_section_", "old_section_"))
    return statements


def _real_headings(corpus_dir: Path) -> list[str]:
    """Headings as documents write them: Markdown '#' lines and HTML <h1>-<h6> text."""
    found: list[str] = []
    folders = [ROOT / "evalsets" / "generalisation" / "docs", corpus_dir / "docs"]
    for path in sorted(p for folder in folders for p in folder.rglob("*") if p.suffix in (".md", ".html", ".htm")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".md":
            found += [m.group(1) for m in re.finditer(r"(?m)^#{1,6}[ \t]+(.+)$", text)]
        else:
            for m in re.finditer(r"(?is)<h[1-6][^>]*>(.*?)</h[1-6]>", text[:3_000_000]):
                found.append(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", m.group(1))).strip())
    return found


KEYWORDS = ["", "§", "Section", "SEC.", "clause", "Abschnitt", "Paragraf", "Oddíl", "Article", "Art.", "ČLÁNEK",
            "čl.", "Item", "NOTE", "Part", "Teil", "Část", "Title", "Chapter", "Kapitel", "Hlava", "Díl", "Appendix"]
NUMBERS = ["1", "7", "12a", "1A", "2.3", "7.2.1", "4.0", "4.0.0", "3.0.1", "1.2.3.4.5", "1.2.3.4.5.6", "2.3.59-12",
           "IV", "xiv", "ci", "12345", "007", "3-", ""]
AFTER = ["", ". Scope of the audit", " – Leases", "b \t"]
HOSTILE = ["", " ", "\t\n", "§" * 5_000, "1." * 3_000, "Section " + "9" * 10_000, "x" * 100_000,
           "7.2.1 " + "Ж" * 50_000, "\u200b7.2.1 Scope", "Item\u00a01A. Risk", "ČÁST 2", "Čl.IV", "§12a)", "1.2.3.",
           "Article 12\n§ 35a", "-- ; DROP TABLE chunks", "'§ 1'", "%s %(x)s"]


@pytest.fixture(scope="module")
def both(pg_server_url: str) -> psycopg.Connection:
    from conftest import fresh_database

    with fresh_database(pg_server_url) as url, database.connect(url) as conn:
        for statement in _old_definitions():
            conn.execute(statement)
        conn.commit()
        yield conn


def _compare(conn: psycopg.Connection, function: str, values: list) -> int:
    """Rows where 030's and 022's `function` disagree (none expected); how many were compared."""
    old = function.replace("rag_section_", "old_section_")
    differ = conn.execute(
        f"SELECT * FROM (SELECT v, {function}(v) AS new, {old}(v) AS old FROM unnest(%s::text[]) AS v) both_"
        " WHERE new IS DISTINCT FROM old LIMIT 5", (values,)).fetchall()
    assert differ == [], differ
    return len(values)


def test_the_new_functions_are_migration_030s(both: psycopg.Connection) -> None:
    languages = dict(both.execute("SELECT p.proname, l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang"
                                  " WHERE p.proname = ANY (%s)", (list(FUNCTIONS),)).fetchall())
    assert languages == {"rag_section_parts": "plpgsql", "rag_section_key_set": "plpgsql",
                         "rag_section_label_keys": "sql", "rag_section_keys": "plpgsql"}


def test_real_headings_give_the_same_parts_and_keys(both: psycopg.Connection, corpus_dir: Path) -> None:
    headings = _real_headings(corpus_dir) + [h for h, _ in HEADINGS] + NOT_NUMBERED
    assert len(headings) > 500  # the documents are there and were read
    numbered = both.execute("SELECT count(*) FROM unnest(%s::text[]) h WHERE rag_section_parts(h) IS NOT NULL",
                            (headings,)).fetchone()[0]
    assert numbered > 100  # numbered headings are among them: the comparison covers the parsing branch
    for function in ("rag_section_parts", "rag_section_key_set"):
        _compare(both, function, headings)


def test_every_keyword_number_and_separator_gives_the_same_parts(both: psycopg.Connection) -> None:
    generated = [f"{k}{sep}{n}{after}" for k, n, after in itertools.product(KEYWORDS, NUMBERS, AFTER)
                 for sep in ((" ",) if k else ("",)) + (("",) if k == "§" else ())]
    generated += [g.upper() for g in generated[::11]] + [g.lower() for g in generated[::13]]
    assert _compare(both, "rag_section_parts", generated) > 1_500
    _compare(both, "rag_section_key_set", generated[::3])  # 022's took ~3 ms a heading


def test_hostile_headings_and_bodies_give_the_same_keys(both: psycopg.Connection) -> None:
    _compare(both, "rag_section_parts", HOSTILE)
    _compare(both, "rag_section_key_set", HOSTILE)
    paths = [[], [None], ["7.2.1 Scope", None, "§ 12"], HOSTILE, [h for h, _ in HEADINGS], ["1." * 3_000] * 10]
    bodies = ["", "body\n\n§ 35a\n\ntext", "Čl. IV\r\n§ 1\n  Article 12.  \nItem 1A", "\n".join(HOSTILE),
              "§ 1\n" * 200, "x" * 100_000]
    for path, body in itertools.product(paths, bodies):
        new, old = both.execute("SELECT rag_section_keys(%s::text[], %s), old_section_keys(%s::text[], %s)",
                                (path, body, path, body)).fetchone()
        assert new == old, (path[:3], body[:40])
    assert both.execute("SELECT rag_section_keys(NULL, 'x'), rag_section_key_set(NULL), rag_section_parts(NULL)"
                        ).fetchone() == (None, None, None)


def test_an_index_built_before_030_answers_the_same_after_it(pg_server_url: str, tmp_path: Path) -> None:
    """A database without 030 whose expression index was built with 022's functions, then migrated
    to 030 (the index is not rebuilt): the index, read through the new functions, finds exactly the
    rows each key names, and the planner still uses it. (The migrations after 030 stay in the
    tree before: sql/views.sql, which the tree's migrate recreates, reads their columns.)"""
    import shutil
    import uuid

    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from rag_pipeline.store import migrations

    before = tmp_path / "sql"
    shutil.copytree(ROOT / "sql", before)
    (before / "migrations" / "030_section_keys_plpgsql.sql").unlink()
    name = "rp_test_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        with database.connect(make_conninfo(**{**conninfo_to_dict(pg_server_url), "dbname": name})) as conn:
            migrations.migrate(conn, before)
            assert conn.execute("SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang"
                                " WHERE p.proname = 'rag_section_keys'").fetchone()[0] == "sql"
            headings = [h for h, _ in HEADINGS] + NOT_NUMBERED + HOSTILE[:6]
            conn.execute("CREATE TABLE heads (id int PRIMARY KEY, path text[], body text)")
            conn.execute("INSERT INTO heads SELECT i, ARRAY[h, 'Annex'], CASE WHEN i %% 3 = 0 THEN '§ 35a' ELSE '' END"
                         " FROM unnest(%s::text[]) WITH ORDINALITY AS u(h, i)", (headings,))
            conn.execute("CREATE INDEX heads_keys ON heads USING gin (rag_section_keys(path, body))")
            conn.commit()
            assert migrations.migrate(conn) == ["030_section_keys_plpgsql"]
            query = "SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM heads WHERE rag_section_keys(path, body) && %s"
            keys = [r[0] for r in conn.execute("SELECT DISTINCT unnest(rag_section_keys(path, body)) FROM heads ORDER BY 1")]
            assert {"s:12", "s:7.2", "s:35a", "i:1a", "a:iv"} <= set(keys)
            conn.execute("SET enable_seqscan = off")
            assert "heads_keys" in "\n".join(r[0] for r in conn.execute("EXPLAIN " + query, (["s:12"],)))
            by_index = {key: conn.execute(query, ([key],)).fetchone()[0] for key in keys}
            conn.execute("SET enable_seqscan = on; SET enable_bitmapscan = off; SET enable_indexscan = off")
            assert "heads_keys" not in "\n".join(r[0] for r in conn.execute("EXPLAIN " + query, (["s:12"],)))
            by_scan = {key: conn.execute(query, ([key],)).fetchone()[0] for key in keys}
            assert by_index == by_scan and all(by_scan.values())
            assert by_scan["s:35a"] == [i for i in range(1, len(headings) + 1) if i % 3 == 0]
    finally:
        with psycopg.connect(pg_server_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
