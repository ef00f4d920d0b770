"""`make review`: the review screen on the demo index, with a few answers already verified.

Syncs the demo corpus if its index is empty, records three answers to a logged search as an
ordinary employee would get them (one verified, one flagged: a wrong hotel cap, one rejected: a
figure no passage states), adds the reviewer `demo` (password `demo-review`, group all-staff),
and serves the screen on http://127.0.0.1:8765 until Ctrl-C. Run again, it records nothing new.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

CALLER = "alice@example.com (review demo)"
QUESTION = "Who approves a business trip abroad and what is the hotel cap in Berlin?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", default="demo/rag_pipeline.yaml")
    parser.add_argument("--port", default="8765")
    args = parser.parse_args()

    from rag_pipeline import cli
    from rag_pipeline.answers.draft import Citation, Claim, Draft
    from rag_pipeline.answers.verify import verify
    from rag_pipeline.config import load_config
    from rag_pipeline.embedding import embedder_for
    from rag_pipeline.retrieval.search import search
    from rag_pipeline.review.reviewers import add_reviewer
    from rag_pipeline.store import database
    from rag_pipeline.sync.context import prepare_database

    config = load_config(Path(args.config))
    url = prepare_database(config)
    with database.connect(url) as conn:
        empty = conn.execute("SELECT count(*) FROM document_versions WHERE status = 'live'").fetchone()[0] == 0
    if empty and cli.main(["sync", "--config", args.config]) != 0:
        return 1
    with database.connect(url) as conn:
        if conn.execute("SELECT count(*) FROM answers WHERE caller = %s", (CALLER,)).fetchone()[0] == 0:
            model = embedder_for(config.embedding)
            hits = search(conn, model, QUESTION, ["all-staff"], k=8, user=CALLER)

            def holding(phrase: str) -> int:
                return next(h.chunk_id for h in hits if phrase in h.text)

            approval, rates = holding("head of department"), holding("| Berlin |")
            answers = [
                [Claim("A business trip abroad must be approved in advance by the head of department.",
                       (Citation(approval, "approved in advance by the head of department"),)),
                 Claim("Hotels in Berlin are paid up to EUR 140 a night.", (Citation(rates),))],
                [Claim("A business trip abroad must be approved in advance by the head of department.",
                       (Citation(approval, "approved in advance by the head of department"),)),
                 Claim("Hotels in Berlin are paid up to EUR 195 a night.", (Citation(rates),))],
                [Claim("Hotels in Berlin are paid up to EUR 250 a night, breakfast excluded.", (Citation(rates),)),
                 Claim("Trips abroad need no approval.", ())],
            ]
            for claims in answers:
                done = verify(conn, model, Draft(hits.log_id, tuple(claims)), user=CALLER)
                print(f"answer {done.answer_id}: {done.verdict}")
        add_reviewer(conn, "demo", ["all-staff"], "demo-review")
    print(f"sign in at http://127.0.0.1:{args.port} as demo / demo-review")
    return cli.main(["review", "serve", "--config", args.config, "--port", args.port])


if __name__ == "__main__":
    sys.exit(main())
