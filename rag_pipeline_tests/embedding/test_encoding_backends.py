"""Encoding backends: ONNX Runtime beside torch, the choice measured on this machine and
remembered, and the identity rule (only vectors that match torch fp32 keep its identity)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rag_pipeline.config import ConfigError, load_config
from rag_pipeline.embedding import Embedder
from rag_pipeline.embedding.backend_choice import CACHE_FILE, choose, machine_key, measure
from rag_pipeline.embedding.backends import AUTO, BACKENDS, ONNX, PROBE_TEXTS, REFERENCE, agreement
from rag_pipeline.embedding.config import EMBEDDING_BACKENDS
from rag_pipeline.embedding.digest_cache import weights_digest
from rag_pipeline.embedding.identity import ModelError

HOSTILE = ["", " ", "\x00\x01 control \u202e bidi", "word " * 5000, "日本語のテキストと emoji 🚚📦", "|" * 3000]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RAG_PIPELINE_CACHE_DIR", str(cache))
    return cache


@pytest.fixture(scope="module")
def onnx_embedder(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    """The packaged model run by ONNX Runtime (exported into a cache of this module's own)."""
    cache = tmp_path_factory.mktemp("onnx-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAG_PIPELINE_CACHE_DIR", str(cache))
        embedder = Embedder(backend=ONNX)
        assert embedder.choice.backend == ONNX  # measured (and exported) while the cache is set
    return embedder


def test_onnx_runtime_vectors_match_torch_and_keep_the_fp32_identity(onnx_embedder: Embedder, embedder) -> None:
    texts = [*PROBE_TEXTS, *HOSTILE]
    reference, onnx = embedder.encode(texts), onnx_embedder.encode(texts)
    assert onnx.shape == reference.shape == (len(texts), 384)
    assert np.allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-5)
    assert float(np.min(np.sum(reference * onnx, axis=1))) >= 0.9999  # texts over the input limit truncated alike
    assert agreement(reference, onnx).within_tolerance
    assert onnx_embedder.choice.agreement(ONNX).within_tolerance
    assert onnx_embedder.identity == embedder.identity  # same numerics: one model for the index


def test_auto_never_chooses_a_fast_backend_whose_vectors_differ() -> None:
    """A backend that is faster but wrong (rows shuffled: plausible unit vectors, wrong texts)
    loses to a slower correct one; the correct one's speed decides among the rest."""
    rng = np.random.default_rng(7)
    truth = {text: v / np.linalg.norm(v) for text, v in zip(PROBE_TEXTS, rng.normal(size=(len(PROBE_TEXTS), 16)), strict=True)}

    def correct(texts: list[str]) -> np.ndarray:
        return np.stack([truth[t] for t in texts])

    def slow_correct(texts: list[str]) -> np.ndarray:
        import time

        time.sleep(0.05)
        return correct(texts)

    def fast_wrong(texts: list[str]) -> np.ndarray:
        return correct(texts)[::-1].copy()

    choice = measure({REFERENCE: slow_correct, "fast-wrong": fast_wrong, ONNX: correct}, AUTO)
    assert choice.backend == ONNX
    assert not choice.agreement("fast-wrong").within_tolerance
    assert choice.rates["fast-wrong"] > choice.rates[REFERENCE]
    only_wrong = measure({REFERENCE: slow_correct, "fast-wrong": fast_wrong}, AUTO)
    assert only_wrong.backend == REFERENCE


def test_the_choice_is_measured_once_per_machine_and_remembered(embedder, _private_cache: Path) -> None:
    digest = weights_digest(embedder.path)
    calls = []

    def candidates() -> dict:
        calls.append(1)
        return {REFERENCE: embedder.encode}

    first = choose(digest, AUTO, candidates)
    again = choose(digest, AUTO, lambda: pytest.fail("a remembered choice must not be measured again"))
    assert first == again and first.backend == REFERENCE and calls == [1]
    stored = json.loads((_private_cache / CACHE_FILE).read_text())
    assert machine_key(digest, AUTO) in stored
    # another setting or other weights are another measurement
    choose("0" * 64, AUTO, candidates)
    assert calls == [1, 1]


@pytest.mark.parametrize("content", [b"", b"\x00\xff", b"[]", b'{"k": "not a choice"}', b"{" * 50_000])
def test_a_corrupt_choice_cache_is_measured_again(embedder, _private_cache: Path, content: bytes) -> None:
    digest = weights_digest(embedder.path)
    _private_cache.mkdir(parents=True, exist_ok=True)
    (_private_cache / CACHE_FILE).write_bytes(content)
    if content.startswith(b'{"k"'):
        (_private_cache / CACHE_FILE).write_text(json.dumps({machine_key(digest, AUTO): {"backend": 3, "bogus": 1}}))
    assert choose(digest, AUTO, lambda: {REFERENCE: embedder.encode}).backend == REFERENCE


def test_a_corrupt_onnx_export_is_a_clear_error_and_is_replaced_next_time(embedder, _private_cache: Path) -> None:
    from rag_pipeline.embedding.onnx_backend import OnnxEncoder, fused_path

    digest = weights_digest(embedder.path)
    broken = fused_path(digest)
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_bytes(b"not an onnx graph" * 100)
    with pytest.raises(ModelError, match="ONNX export") as raised:
        OnnxEncoder(embedder.model, digest)
    assert str(broken) in str(raised.value) and not broken.exists()
    assert OnnxEncoder(embedder.model, digest).encode(["again"]).shape == (1, 384)


def test_a_model_onnx_cannot_run_is_refused_when_configured_and_skipped_under_auto(tmp_path: Path, embedder) -> None:
    """A Dense head after pooling is not reproduced by the ONNX path: asking for ONNX says so,
    `auto` keeps torch."""
    from sentence_transformers import SentenceTransformer, models

    from rag_pipeline.embedding.backends import candidate_backends, native_bf16

    base = embedder.model
    headed = SentenceTransformer(modules=[base[0], base[1], models.Dense(384, 32, activation_function=None)], device="cpu")
    folder = tmp_path / "headed"
    headed.save(str(folder))
    with pytest.raises(ModelError, match="torch-fp32"):
        _ = Embedder(str(folder), backend=ONNX).choice
    auto = Embedder(str(folder))
    # torch in the precision this CPU offers: bfloat16 competes only where it is native (AVX512-BF16/AMX)
    torch_backends = candidate_backends(native_bf16(), onnx_supported=False)
    assert auto.choice.backend in torch_backends and ONNX not in auto.choice.rates
    assert set(auto.choice.rates) == set(torch_backends)
    assert auto.encode(["a text"]).shape == (1, 32)


def test_the_backend_setting_is_validated(tmp_path: Path) -> None:
    assert set(EMBEDDING_BACKENDS) == {AUTO, *BACKENDS}
    config = tmp_path / "rag_pipeline.yaml"
    for bad in ("cuda-fp8", '""', "ONNX", "[1, 2]", "null", "7", '"auto; DROP TABLE chunks"', "x" * 10_000):
        config.write_text(f"sources: [{{name: docs, kind: filesystem, path: docs}}]\nembedding: {{backend: {bad}}}\n")
        with pytest.raises(ConfigError, match="embedding.backend"):
            load_config(config)
    with pytest.raises(ModelError, match="unknown embedding backend"):
        Embedder(backend="gpu-magic")


def test_setup_prepares_the_encoder_so_a_later_process_measures_nothing(_private_cache: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`make setup` runs `python -m rag_pipeline.embedding.prepare`: the backend choice is
    measured and remembered (with the ONNX export it chose) in the user's cache, so the first
    sync's process reads it instead of importing torch to measure; a missing model exits 1
    saying so, and leaves the cache untouched."""
    import os
    import subprocess
    import sys

    import rag_pipeline.embedding.backend_choice as backend_choice
    from rag_pipeline.embedding.prepare import main

    env = {**os.environ, "RAG_PIPELINE_CACHE_DIR": str(_private_cache), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "rag_pipeline.embedding.prepare"], env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    remembered = json.loads((_private_cache / CACHE_FILE).read_text())
    (key, entry), = remembered.items()
    assert f"|{AUTO}|" in key and entry["backend"] in done.stdout and "texts/s" in done.stdout

    def no_measuring(*_: object) -> None:
        raise AssertionError("measured again after setup prepared the encoder")

    monkeypatch.setattr(backend_choice, "measure", no_measuring)
    fresh = Embedder()
    assert fresh.choice.backend == entry["backend"]
    if entry["backend"] == ONNX:  # its export is read from the cache, not made again from torch
        fresh.warm()
        assert "model" not in fresh.__dict__  # no sentence-transformers model (torch) loaded

    from rag_pipeline.embedding.config import EmbeddingConfig

    assert main(EmbeddingConfig(model=str(tmp_path / "no-such-model"))) == 1
    assert json.loads((_private_cache / CACHE_FILE).read_text()) == remembered
