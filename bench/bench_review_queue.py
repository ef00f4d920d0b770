"""The review queue with 100,000 answers (issue 25: a queue page opens in under 300 ms): the
server-side time to open a page of the queue, that is the queue's query and the page's render
(the screen's own template), for the first page, a page deep in the queue, and each filter.

    python bench/bench_review_queue.py --config CONFIG [--answers 100000] [--runs 20]

Against an index already synced by CONFIG (e.g. the demo: `make demo` first). Everything is
written inside one transaction that is rolled back at the end, so the index is left as it was:
a few real searches are logged, then `--answers` answers are recorded (the migration's triggers
fill the queue's tables as for any answer), 60% flagged or rejected, spread over a year, each
citing one of the searches' results, and a fifth of the flagged ones decided. Printed: median
and 95th percentile per case, the plan of the first page (an index scan), and the ratio of a
page 2,000 answers deep to the first page (keyset paging: ~1).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

QUESTIONS = ("Who approves a business trip abroad?", "What is the hotel cap in Berlin?",
             "How long must passwords be?", "How many days a week may I work from home?",
             "What are the discount rules for partners?", "How much parental leave is there?")

FILL = """
WITH cited AS (SELECT array_agg(chunk_id ORDER BY chunk_id) AS ids, array_agg(search_id ORDER BY chunk_id) AS searches
               FROM (SELECT DISTINCT ON ((h ->> 'chunk_id')::bigint) (h ->> 'chunk_id')::bigint AS chunk_id, l.id AS search_id
                     FROM search_log l, jsonb_array_elements(l.results) h WHERE l.id = ANY(%(searches)s)) x)
INSERT INTO answers (search_id, verified_at, judged_as_of, caller, draft, claims, verdict, support_threshold,
                     support_coverage_weight, support_source)
SELECT c.searches[1 + i %% cardinality(c.ids)], now() - i * interval '5 minutes', now(), 'bench',
       jsonb_build_object('log_id', c.searches[1 + i %% cardinality(c.ids)], 'claims', '[]'::jsonb),
       jsonb_build_array(jsonb_build_object('text', 'claim ' || i, 'status', CASE WHEN i %% 10 < 4 THEN 'supported' ELSE 'unsupported' END,
         'reason', 'bench', 'citations', jsonb_build_array(jsonb_build_object('chunk_id', c.ids[1 + i %% cardinality(c.ids)],
         'status', 'unsupported', 'reason', 'bench')))),
       CASE WHEN i %% 10 < 4 THEN 'verified' WHEN i %% 10 < 9 THEN 'flagged' ELSE 'rejected' END, 0.7, 0.5, 'bench'
FROM cited c, generate_series(1, %(n)s) i
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True)
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()

    from rag_pipeline import store
    from rag_pipeline.config import load_config
    from rag_pipeline.embedding import embedder_for
    from rag_pipeline.retrieval.search import search
    from rag_pipeline.review import queue
    from rag_pipeline.store import database
    from rag_pipeline.sync.context import prepare_database
    from rag_pipeline.web.render import environment

    config = load_config(Path(args.config))
    model = embedder_for(config.embedding)
    template = environment().get_template("queue.html")
    with database.connect(prepare_database(config), autocommit=False) as conn:
        searches = [search(conn, model, q, ["all-staff", "sales", "hr"], k=8, user="bench").log_id for q in QUESTIONS]
        started = time.perf_counter()
        conn.execute(FILL, {"searches": searches, "n": args.answers})
        filled = time.perf_counter() - started
        conn.execute("INSERT INTO review_decisions (answer_id, decision, reviewer)"
                     " SELECT answer_id, 'approve', 'bench' FROM review_queue WHERE verdict = 'flagged' AND answer_id % 5 = 0")
        conn.execute("ANALYZE answers, review_queue, review_keys, review_answer_versions, review_decisions")
        counts = conn.execute("SELECT count(*), count(*) FILTER (WHERE state = 'open') FROM review_queue").fetchone()
        print(f"{args.answers:,} answers recorded in {filled:.1f} s ({1e6 * filled / args.answers:.0f} us each, triggers "
              f"included); queue: {counts[0]:,} answers, {counts[1]:,} open")
        source = conn.execute("SELECT key FROM review_keys WHERE kind = 'source' LIMIT 1").fetchone()[0]
        document = conn.execute("SELECT key, count(*) FROM review_keys WHERE kind = 'document' GROUP BY key"
                                " ORDER BY count(*) LIMIT 1").fetchone()[0]
        deep = None
        for _ in range(4):
            deep = queue.page(conn, queue.queue_filter(limit=500, cursor=deep)).next_cursor
        cases = {
            "first page (open)": {}, "page 2,000 deep": {"cursor": deep}, "flagged": {"status": "flagged"},
            "rejected": {"status": "rejected"}, "approved": {"status": "approve"}, "all": {"status": "all"},
            f"source {source}": {"source": source}, "rarest document": {"document": document},
            "one week": {"since": "2026-01-01", "until": "2026-01-08"},
            "reviewer all-staff": {"groups": ("all-staff",)},
        }
        timings: dict[str, list[float]] = {}
        for name, filters in cases.items():
            wanted = queue.queue_filter(**filters)
            for _ in range(args.runs):
                started = time.perf_counter()
                page = queue.page(conn, wanted)
                template.render(rows=page.rows, given={"status": wanted.status, "source": "", "document": "", "since": "",
                                                      "until": ""}, next_url=None, problem=None,
                                statuses=store.reviews.STATUS_FILTERS, decided=None, reviewer=None, csrf="x", proxy=False)
                timings.setdefault(name, []).append(1000 * (time.perf_counter() - started))
            print(f"{name:<24} {len(page.rows):>3} rows  median {statistics.median(timings[name]):7.2f} ms"
                  f"  p95 {sorted(timings[name])[int(0.95 * (len(timings[name]) - 1))]:7.2f} ms")
        ratio = statistics.median(timings["page 2,000 deep"]) / statistics.median(timings["first page (open)"])
        print(f"deep page / first page: {ratio:.2f}")
        plan = store.reviews.explain_queue(conn, queue.queue_filter())
        print("plan of the first page:\n  " + "\n  ".join(plan))
        print(f"load: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
        conn.rollback()


if __name__ == "__main__":
    main()
