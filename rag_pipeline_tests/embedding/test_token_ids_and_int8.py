"""Token ids computed once (by the chunker's count) and reused by the encoder, batches sorted by
token length, and the opt-in int8 encoder as a model of its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rag_pipeline.embedding import Embedder
from rag_pipeline.embedding.backends import AUTO, ONNX, ONNX_INT8, PROBE_TEXTS, REFERENCE, agreement
from rag_pipeline.embedding.tokens import TokenIds, length_batches, padded, truncated

HOSTILE = ["", " ", "\x00\x01 control \u202e bidi", "word " * 5000, "日本語のテキストと emoji 🚚📦", "|" * 3000,
           "a\n\n\n\tb" * 40]
TEXTS = [*PROBE_TEXTS, *HOSTILE]


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture(autouse=True)
def _module_cache(model_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One cache per module: the ONNX export and its int8 copy are made once, not per test."""
    monkeypatch.setenv("RAG_PIPELINE_CACHE_DIR", str(model_cache))


def test_the_tokenizer_file_gives_the_models_own_ids(embedder) -> None:
    """Counting reads tokenizer.json directly (no torch); its ids must be the loaded model's."""
    fresh = Embedder()
    ours = [ids.tolist() for ids in fresh.token_ids.ids(TEXTS)]
    assert not fresh.loaded
    theirs = embedder.model.tokenizer(TEXTS, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
    assert ours == theirs
    assert fresh.count_tokens(TEXTS) == [len(ids) for ids in theirs]


@pytest.mark.parametrize("backend", [REFERENCE, ONNX])
def test_ids_reused_from_the_count_give_identical_vectors(backend: str) -> None:
    counted, fresh = Embedder(backend=backend), Embedder(backend=backend)
    assert counted.choice.backend == fresh.choice.backend == backend  # measured before anything is counted
    counted.count_tokens(TEXTS)  # what the chunker does: the ids are kept
    before = counted.stats.ids_reused
    reused = counted.encode(TEXTS)
    assert counted.stats.ids_reused - before == len(TEXTS)
    before = fresh.stats.ids_reused
    tokenised = fresh.encode(TEXTS)
    assert fresh.stats.ids_reused == before
    assert np.array_equal(reused, tokenised)


def test_ids_encode_exactly_as_the_model_encodes_the_text(embedder) -> None:
    """The ids path (truncated and padded here) against the library's own text path, batch for
    batch: torch through sentence-transformers' encode, ONNX through the tokenizer call."""
    batch = [*PROBE_TEXTS[:6], "word " * 400]  # one text over the 256-token limit
    ids = [truncated(i, embedder.max_tokens) for i in embedder.token_ids.ids(batch)]
    feed = padded(ids, embedder.token_ids.pad_id)
    by_ids = embedder._torch_ids(embedder.model)(feed)
    by_text = embedder.model.encode(batch, batch_size=len(batch), normalize_embeddings=True, convert_to_numpy=True)
    assert np.allclose(by_ids, by_text, atol=1e-6)
    from rag_pipeline.embedding.digest_cache import weights_digest
    from rag_pipeline.embedding.onnx_backend import OnnxEncoder

    onnx = OnnxEncoder(embedder.model, weights_digest(embedder.path))
    assert np.array_equal(onnx.encode_ids(feed), onnx.encode(batch))


def test_remembered_ids_stay_within_their_budget() -> None:
    calls: list[list[str]] = []

    def tokenize(texts: list[str]) -> list[list[int]]:
        calls.append(texts)
        return [[101, *range(len(t)), 102] for t in texts]

    ids = TokenIds(tokenize, budget=50)
    assert ids.count(["abc", "defgh"]) == [5, 7]
    assert ids.held("abc") and ids.ids(["abc"])[0].tolist() == [101, 0, 1, 2, 102] and len(calls) == 1
    ids.count(["x" * 40])  # 42 ids: the oldest are dropped to stay within 50
    assert not ids.held("abc") and ids.held("x" * 40)
    ids.count(["y" * 100])  # larger than the whole budget: counted, never kept
    assert not ids.held("y" * 100) and ids.held("x" * 40)


def test_length_batches_cover_every_text_once_with_little_padding() -> None:
    rng = np.random.default_rng(3)
    lengths = rng.integers(20, 257, size=1000).tolist()
    batches = length_batches(lengths, max_texts=32, max_tokens=4096)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(1000))
    padded_tokens = sum(len(b) * max(lengths[i] for i in b) for b in batches)
    assert 1 - sum(lengths) / padded_tokens < 0.03  # padding within a few percent
    assert all(len(b) * max(lengths[i] for i in b) <= 4096 or len(b) == 1 for b in batches)
    # a few texts of very different lengths: no batch padded beyond the cap once it has 4 texts
    spread = [256, 250, 240, 230, 60, 50, 40, 30, 20, 10, 5, 3]
    for batch in length_batches(spread, max_texts=32):
        real = sum(spread[i] for i in batch)
        assert len(batch) <= 4 or 1 - real / (len(batch) * max(spread[i] for i in batch)) <= 0.05
    assert length_batches([], 32) == [] and [b.tolist() for b in length_batches([0, 5000], 32, 4096)] == [[1], [0]]


def test_sorted_batches_return_vectors_in_the_callers_order(embedder) -> None:
    """Many texts of mixed length (several capped batches): each row is its own text's vector."""
    texts = [f"Case {i}: " + f"{PROBE_TEXTS[i % len(PROBE_TEXTS)]} " * (1 + i % 9) for i in range(70)]
    together = embedder.encode(texts)
    alone = np.concatenate([embedder.encode([t]) for t in texts])
    assert float(np.min(np.sum(together * alone, axis=1))) >= 0.9999
    assert np.allclose(together, alone, atol=5e-5)  # row by row: no neighbour's vector in its place
    assert not np.allclose(together[0], together[24], atol=5e-5)  # the same sentence once vs 7 times differs


def test_int8_is_its_own_model_identity_and_auto_never_chooses_it(embedder, db_url: str) -> None:
    from rag_pipeline import store
    from rag_pipeline.store import database

    int8 = Embedder(backend=ONNX_INT8)
    assert int8.identity.numerics == "int8" != embedder.identity.numerics
    assert {**int8.identity.to_dict(), "numerics": "fp32"} == embedder.identity.to_dict()  # same weights, other numerics
    vectors = int8.encode(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert int8.choice.backend == ONNX_INT8
    assert not agreement(embedder.encode(TEXTS), vectors).within_tolerance  # why it may not share fp32's identity
    with database.connect(db_url) as conn:
        fp32_id = store.models.register_model(conn, embedder.identity.to_dict())
        int8_id = store.models.register_model(conn, int8.identity.to_dict())
        assert fp32_id != int8_id
        assert store.models.model_by_id(conn, int8_id)["numerics"] == "int8"
    assert ONNX_INT8 not in Embedder(backend=AUTO)._candidates()


def test_the_fp32_graph_is_fused_and_computes_the_models_vectors(embedder) -> None:
    """The speed of the ONNX path rests on the fusion really happening (one Attention kernel
    per layer); its vectors must still be the model's, hostile texts included."""
    import onnx

    from rag_pipeline.embedding.digest_cache import weights_digest
    from rag_pipeline.embedding.onnx_backend import OnnxEncoder, fused_path

    digest = weights_digest(embedder.path)
    encoder = OnnxEncoder(embedder.model, digest)
    ops = [node.op_type for node in onnx.load(str(fused_path(digest)), load_external_data=False).graph.node]
    layers = embedder.model[0].auto_model.config.num_hidden_layers
    assert ops.count("Attention") == layers and "EmbedLayerNormalization" in ops
    fused = np.concatenate([encoder.encode(TEXTS[i:i + 5]) for i in range(0, len(TEXTS), 5)])
    reference = embedder.model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    assert float((fused * reference).sum(axis=1).min()) > 0.99999


def test_runs_of_a_few_rows_give_the_vectors_of_one_run(embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    from rag_pipeline.embedding import onnx_backend
    from rag_pipeline.embedding.digest_cache import weights_digest

    encoder = onnx_backend.OnnxEncoder(embedder.model, weights_digest(embedder.path))
    ids = [truncated(i, embedder.max_tokens) for i in embedder.token_ids.ids(TEXTS)]
    feed = padded(ids, embedder.token_ids.pad_id)  # mixed lengths: most rows padded far
    in_runs = encoder.encode_ids(feed)
    monkeypatch.setattr(onnx_backend, "RUN_ROWS", len(TEXTS))
    at_once = encoder.encode_ids(feed)
    assert in_runs.shape == at_once.shape == (len(TEXTS), 384)
    assert np.allclose(in_runs, at_once, atol=1e-5)


def test_a_model_the_optimizer_cannot_fuse_runs_the_plain_graph_and_is_not_retried(
        embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault that needs another architecture to happen for real: the optimizer raising. The
    plain export then encodes (same vectors), and the failure is remembered, so later processes
    open the plain graph from files (no torch) instead of re-exporting and failing again."""
    import onnxruntime.transformers.optimizer as optimizer

    from rag_pipeline.embedding.digest_cache import weights_digest
    from rag_pipeline.embedding.onnx_backend import OnnxEncoder, export_path, fused_path, unfusable_path

    monkeypatch.setenv("RAG_PIPELINE_CACHE_DIR", str(tmp_path / "fresh-cache"))  # not even the folder exists
    calls: list[str] = []

    def refuse(*args, **kwargs):
        calls.append("optimize")
        raise ValueError("unsupported attention pattern")

    monkeypatch.setattr(optimizer, "optimize_model", refuse)
    digest = weights_digest(embedder.path)
    first = OnnxEncoder(embedder.model, digest)
    assert calls == ["optimize"] and not fused_path(digest).exists() and export_path(digest).is_file()
    assert "unsupported attention pattern" in unfusable_path(digest).read_text(encoding="utf-8")
    reference = embedder.model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    assert float((first.encode(TEXTS) * reference).sum(axis=1).min()) > 0.99999
    again = OnnxEncoder(embedder.model, digest)
    from_files = OnnxEncoder.from_files(embedder.path, digest, embedder.max_tokens)
    assert calls == ["optimize"] and from_files is not None
    ids = [truncated(i, embedder.max_tokens) for i in embedder.token_ids.ids(TEXTS)]
    feed = padded(ids, embedder.token_ids.pad_id)
    assert np.allclose(from_files.encode_ids(feed), again.encode_ids(feed), atol=1e-6)
