"""What a first sync's encode costs per token on this CPU, against the peer's encoder (issue 28).

Two figures that bound the first sync against LangChain's `index()` (bench_peer.py):
- the two encoders on the generated corpus' chunk texts (the model input the project embeds):
  sentence-transformers on torch fp32, as the peer encodes, and the project's Embedder with the
  backend `auto` chose here; interleaved rounds, best of --rounds, ms per 1,000 real tokens; and
  the same two on the probe set of short texts, where per-call overhead decides;
- the share of the project's tokens spent on each chunk's identity line and section path, which
  the peer does not encode.
Where the encoders are level per token, the project's encode is its tokens over the peer's. Figures only.

    python bench/bench_encode_chunks.py                 # 300 texts, 3 rounds, 200 documents for the share
    python bench/bench_encode_chunks.py --texts 600 --docs 1000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import generated_corpus
from bench_onnx_graph import chunk_texts

from rag_pipeline.chunking.chunks import chunk_elements
from rag_pipeline.chunking.document_identity import document_identity
from rag_pipeline.cleaning.clean import clean_elements
from rag_pipeline.embedding import Embedder
from rag_pipeline.embedding.backend_choice import best_seconds
from rag_pipeline.embedding.backends import PROBE_TEXTS
from rag_pipeline.parsing import parse_document


def warmed_best_seconds(encoders: dict[str, Callable[[list[str]], object]], texts: list[str],
                        rounds: int) -> dict[str, float]:
    """`backend_choice.best_seconds` after one warm-up run of each encoder."""
    for encode in encoders.values():
        encode(texts[:8])
    return best_seconds(encoders, texts, rounds)


def prefix_share(embedder: Embedder, docs: int) -> tuple[int, int, int]:
    """Chunks of `docs` generated documents, their prefix tokens and their body tokens."""
    chunks = prefix = body = 0
    with tempfile.TemporaryDirectory() as folder:
        for path in generated_corpus.write_corpus(Path(folder), docs):
            parsed = parse_document(path.read_bytes(), path.name)
            elements, _ = clean_elements(list(parsed.elements))
            identity = document_identity(parsed.title, elements, path.name)
            for chunk in chunk_elements(elements, embedder.count_tokens, embedder.max_tokens, identity=identity):
                chunks += 1
                prefix += embedder.count_tokens([chunk.search_prefix])[0] - 2 if chunk.search_prefix else 0
                body += embedder.count_tokens([chunk.text])[0]
    return chunks, prefix, body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--docs", type=int, default=200, help="generated documents for the prefix share")
    args = parser.parse_args()

    embedder = Embedder()
    texts = chunk_texts(embedder, args.texts)
    tokens = sum(embedder.count_tokens(texts))
    model = embedder.model  # sentence-transformers on torch, as the peer loads it

    def torch_fp32(batch: list[str]) -> object:
        return model.encode(batch, batch_size=32, normalize_embeddings=True)

    encoders = {"sentence-transformers, torch fp32 (the peer's)": torch_fp32,
                f"project Embedder ({embedder.choice.backend})": embedder.encode}
    chunks_s = warmed_best_seconds(encoders, texts, args.rounds)
    probe_s = warmed_best_seconds(encoders, list(PROBE_TEXTS), args.rounds)
    print(f"{len(texts)} chunk texts, {tokens} tokens; load {os.getloadavg()[0]:.1f}")
    print("| encoder | chunk texts s | ms / 1k tokens | probe texts/s |")
    print("|---|---:|---:|---:|")
    for name in encoders:
        print(f"| {name} | {chunks_s[name]:.2f} | {chunks_s[name] / tokens * 1e6:.1f} | "
              f"{len(PROBE_TEXTS) / probe_s[name]:.1f} |")
    first, second = encoders
    print(f"torch / project per token on chunk texts: {chunks_s[first] / chunks_s[second]:.3f}x")
    chunks, prefix, body = prefix_share(embedder, args.docs)
    print(f"{args.docs} documents: {chunks} chunks, {prefix + body} tokens, identity line and section path "
          f"{prefix} ({prefix / (prefix + body):.1%}), mean {(prefix + body) / chunks:.1f} tokens a text")


if __name__ == "__main__":
    main()
