"""The embedding model's identity without loading it, the weight digest cache, and the lazily
loaded encoder. Real model files (the packaged MiniLM and variants saved from it)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from rag_pipeline.embedding import Embedder
from rag_pipeline.embedding.digest_cache import CACHE_FILE, hash_weights, weight_files, weights_digest
from rag_pipeline.embedding.identity import ModelError, shape_from_files


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RAG_PIPELINE_CACHE_DIR", str(cache))
    return cache


def _loaded_shape(model) -> tuple[int, bool, int]:
    """What the loaded model does: its dimension and input limit, and whether a text's vector
    comes out unit length (measured, not read from the module list)."""
    get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    vectors = model.encode(["a first probe text", "another, longer probe text about travel"], convert_to_numpy=True)
    unit = bool(np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4))
    return int(get_dim()), unit, int(model.max_seq_length)


def test_identity_from_files_is_the_loaded_models_and_loads_nothing(embedder) -> None:
    fresh = Embedder()  # not the cached, loaded one
    identity = fresh.identity
    assert not fresh.loaded
    assert (identity.dimension, identity.normalized, identity.max_tokens) == _loaded_shape(embedder.model)
    assert identity.weights_sha256 == hash_weights(fresh.path, weight_files(fresh.path))
    assert identity == embedder.identity


@pytest.fixture(scope="module")
def dense_model(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    """MiniLM with a 128-token limit and a Dense 384->64 head after normalisation: a different
    dimension, not normalised, a different input limit."""
    from sentence_transformers import SentenceTransformer, models

    base = embedder.model
    modules = [base[0], base[1], base[2], models.Dense(384, 64, activation_function=None)]
    model = SentenceTransformer(modules=modules, device="cpu")
    model.max_seq_length = 128
    path = tmp_path_factory.mktemp("models") / "minilm-dense64"
    model.save(str(path))
    base.max_seq_length = 256  # modules are shared with the session's model: restore its limit
    return path


def test_identity_from_files_follows_dense_heads_and_input_limits(dense_model: Path) -> None:
    from sentence_transformers import SentenceTransformer

    shape = shape_from_files(dense_model)
    assert shape is not None
    assert (shape.dimension, shape.normalized, shape.max_tokens) == (64, False, 128)
    assert (shape.dimension, shape.normalized, shape.max_tokens) == _loaded_shape(SentenceTransformer(str(dense_model), device="cpu"))


def _copy_model(embedder, target: Path) -> Path:
    shutil.copytree(embedder.path, target)
    return target


@pytest.mark.parametrize("damage", ["no modules.json", "garbage modules.json", "unknown module", "no input limit"])
def test_folders_the_files_do_not_describe_fall_back_to_the_loaded_model(embedder, tmp_path: Path, damage: str) -> None:
    folder = _copy_model(embedder, tmp_path / "m")
    modules = json.loads((folder / "modules.json").read_text())
    if damage == "no modules.json":
        (folder / "modules.json").unlink()
    elif damage == "garbage modules.json":
        (folder / "modules.json").write_bytes(b"\xff\x00{[")
    elif damage == "unknown module":
        modules.append({"idx": 3, "name": "3", "path": "3_Custom", "type": "my_package.CustomHead"})
        (folder / "modules.json").write_text(json.dumps(modules))
    else:
        (folder / "sentence_bert_config.json").unlink()
        (folder / "config.json").write_text(json.dumps({"hidden_size": 384}))
        (folder / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True}))
    assert shape_from_files(folder) is None


def test_a_folder_without_weights_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "modules.json").write_text("[]")
    with pytest.raises(ModelError, match="no weight files"):
        weights_digest(tmp_path)


@pytest.fixture
def fake_weights(tmp_path: Path) -> Path:
    folder = tmp_path / "weights"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"A" * 4096)
    (folder / "sub").mkdir()
    (folder / "sub" / "head.bin").write_bytes(b"B" * 100)
    return folder


def test_digest_is_cached_by_file_identity(fake_weights: Path, _private_cache: Path) -> None:
    digest = weights_digest(fake_weights)
    assert digest == hash_weights(fake_weights, weight_files(fake_weights))
    cache_file = _private_cache / CACHE_FILE
    entries = json.loads(cache_file.read_text())
    # a matching entry is trusted without reading the weights: plant a marker to see it used
    entries[str(fake_weights.resolve())]["sha256"] = "cached"
    cache_file.write_text(json.dumps(entries))
    assert weights_digest(fake_weights) == "cached"


def test_a_rewritten_weight_file_is_hashed_again_even_with_size_and_mtime_kept(fake_weights: Path) -> None:
    first = weights_digest(fake_weights)
    weights = fake_weights / "model.safetensors"
    before = weights.stat()
    weights.write_bytes(b"C" * 4096)  # same size
    os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns))  # same mtime: ctime still moves
    second = weights_digest(fake_weights)
    assert second != first
    assert second == hash_weights(fake_weights, weight_files(fake_weights))


def test_added_or_removed_weight_files_change_the_digest(fake_weights: Path) -> None:
    first = weights_digest(fake_weights)
    (fake_weights / "extra.pt").write_bytes(b"D")
    assert weights_digest(fake_weights) != first
    (fake_weights / "extra.pt").unlink()
    assert weights_digest(fake_weights) == first


@pytest.mark.parametrize("content", [b"", b"\x00\xff not json", b"[1, 2, 3]", b'{"x": "y"}', b"{" * 100_000])
def test_a_corrupt_cache_is_ignored_and_rewritten(fake_weights: Path, _private_cache: Path, content: bytes) -> None:
    _private_cache.mkdir()
    (_private_cache / CACHE_FILE).write_bytes(content)
    expected = hash_weights(fake_weights, weight_files(fake_weights))
    assert weights_digest(fake_weights) == expected
    assert json.loads((_private_cache / CACHE_FILE).read_text())[str(fake_weights.resolve())]["sha256"] == expected


def test_an_unwritable_cache_only_costs_the_hashing(fake_weights: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("RAG_PIPELINE_CACHE_DIR", str(blocker))
    assert weights_digest(fake_weights) == hash_weights(fake_weights, weight_files(fake_weights))


def test_encoding_loads_the_model_on_first_use() -> None:
    fresh = Embedder()
    assert not fresh.loaded
    assert fresh.encode([]).shape == (0, 384) and not fresh.loaded
    vectors = fresh.encode(["a first text", "a second"])
    assert fresh.loaded and vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


# ---------------------------------------------------------------- batching and backends

def test_length_sorted_batches_return_vectors_in_input_order(embedder) -> None:
    from rag_pipeline.embedding.backends import PROBE_TEXTS

    texts = [*PROBE_TEXTS[::-1], PROBE_TEXTS[3], "", "x" * 5000]  # duplicates, empty, over the limit
    sorted_batches = embedder.encode(texts)
    one_by_one = np.stack([embedder.model.encode([t], normalize_embeddings=True, convert_to_numpy=True)[0] for t in texts])
    cosines = np.sum(sorted_batches * one_by_one, axis=1)
    assert sorted_batches.shape == (len(texts), 384)
    assert cosines.min() >= 0.9999
    # each row is its own text's vector, not a neighbour's that happens to be close
    assert (np.argmax(sorted_batches @ one_by_one.T, axis=1)[: len(PROBE_TEXTS)] == np.arange(len(PROBE_TEXTS))).all()


def test_a_backend_within_tolerance_is_the_same_model_one_beyond_it_is_another(embedder) -> None:
    import copy

    import torch

    from rag_pipeline.embedding.backends import PROBE_TEXTS, agreement, numerics_for

    texts = list(PROBE_TEXTS)
    reference = embedder.encode(texts)
    # the same fp32 model, other batch composition: agrees, so it keeps the reference identity
    regrouped = embedder.model.encode(texts[::-1], batch_size=5, normalize_embeddings=True, convert_to_numpy=True)[::-1]
    same = agreement(reference, regrouped)
    assert same.within_tolerance
    assert numerics_for("other-fp32-backend", same) == "fp32"
    # bfloat16 weights and activations: vectors move beyond tolerance -> a different model
    bf16 = copy.deepcopy(embedder.model).to(torch.bfloat16)
    lowered = np.asarray(bf16.encode(texts, normalize_embeddings=True, convert_to_tensor=True).float().cpu().numpy())
    differs = agreement(reference, lowered)
    assert not differs.within_tolerance
    assert numerics_for("torch-bf16", differs) == "torch-bf16"
    assert numerics_for("torch-fp32", None) == "fp32"


def test_agreement_catches_swapped_rows_and_refuses_mismatched_shapes(embedder) -> None:
    from rag_pipeline.embedding.backends import PROBE_TEXTS, agreement

    reference = embedder.encode(list(PROBE_TEXTS))
    swapped = reference.copy()
    swapped[[0, 5]] = swapped[[5, 0]]
    assert not agreement(reference, swapped).within_tolerance
    with pytest.raises(ValueError, match="shape"):
        agreement(reference, reference[:-1])


@pytest.mark.parametrize(("content", "expected"), [
    ("processor: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16 amx_tile\n", True),
    ("processor: 0\nflags\t\t: fpu sse4_2 avx2 fma\n", False),
    ("flags: amx_bf16\n", True),
    ("\x00\xff garbage without flags", False),
    (None, False),
])
def test_native_bfloat16_is_read_from_the_cpu_flags(tmp_path: Path, content: str | None, expected: bool) -> None:
    from rag_pipeline.embedding.backends import candidate_backends, native_bf16

    cpuinfo = tmp_path / "cpuinfo"
    if content is not None:
        cpuinfo.write_text(content)
    assert native_bf16(cpuinfo) is expected
    assert ("torch-bf16" in candidate_backends(native_bf16(cpuinfo))) is expected


def test_numerics_are_part_of_the_recorded_identity(embedder, db_url: str) -> None:
    from rag_pipeline import store
    from rag_pipeline.store import database

    identity = embedder.identity.to_dict()
    assert identity["numerics"] == "fp32"
    with database.connect(db_url) as conn:
        reference = store.models.register_model(conn, identity)
        legacy = store.models.register_model(conn, {k: v for k, v in identity.items() if k != "numerics"})
        lowered = store.models.register_model(conn, {**identity, "numerics": "torch-bf16"})
        assert legacy == reference != lowered
        assert store.models.model_by_id(conn, lowered)["numerics"] == "torch-bf16"
