"""SHA-256 of a model's weight files, cached by file identity.

Hashing the weights reads every weight file (90 MB for MiniLM, gigabytes for larger models) and
used to happen in every process that needed the model's identity. The digest is now kept in a
small JSON file under the user's cache folder, keyed by the model folder and valid only while
every weight file keeps its path, size, mtime_ns, ctime_ns and inode: replacing or rewriting a
file changes at least one of those (ctime cannot be set back by the file's owner), so a stale
entry is never used. An unreadable or corrupt cache is ignored and rewritten; an unwritable
cache folder only costs the hashing.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from rag_pipeline.embedding.identity import ModelError

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".onnx")
CACHE_FILE = "weights-digests.json"


def cache_dir() -> Path:
    """RAG_PIPELINE_CACHE_DIR, else $XDG_CACHE_HOME/rag_pipeline, else ~/.cache/rag_pipeline."""
    explicit = os.environ.get("RAG_PIPELINE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rag_pipeline"


def weight_files(model_dir: Path) -> list[Path]:
    files = sorted(p for p in model_dir.rglob("*") if p.is_file() and p.suffix in WEIGHT_SUFFIXES)
    if not files:
        raise ModelError(f"no weight files ({', '.join(WEIGHT_SUFFIXES)}) under {model_dir}")
    return files


def hash_weights(model_dir: Path, files: list[Path]) -> str:
    """One SHA-256 over every weight file (sorted by relative path, name included)."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(model_dir).as_posix().encode())
        with path.open("rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
    return digest.hexdigest()


def file_identities(model_dir: Path, files: list[Path]) -> list[list[object]]:
    rows: list[list[object]] = []
    for path in files:
        st = path.stat()
        rows.append([path.relative_to(model_dir).as_posix(), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev])
    return rows


def weights_digest(model_dir: Path) -> str:
    """The weight digest of `model_dir`, from the cache when no weight file changed."""
    model_dir = model_dir.resolve()
    files = weight_files(model_dir)
    identities = file_identities(model_dir, files)
    cache_path = cache_dir() / CACHE_FILE
    entries = read_cache(cache_path)
    entry = entries.get(str(model_dir))
    if isinstance(entry, dict) and entry.get("files") == identities and isinstance(entry.get("sha256"), str):
        return entry["sha256"]
    digest = hash_weights(model_dir, files)
    if file_identities(model_dir, files) == identities:  # not rewritten while we read it
        entries[str(model_dir)] = {"files": identities, "sha256": digest}
        write_cache(cache_path, entries)
    return digest


def read_cache(path: Path) -> dict[str, object]:
    """A JSON cache file's entries; a missing, unreadable or corrupt file is an empty cache."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_cache(path: Path, entries: dict[str, object]) -> None:
    """Atomic replace, so a concurrent reader sees the old or the new file, never half of one;
    an unwritable cache folder only costs recomputing next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".cache-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(entries, handle)
        os.replace(tmp, path)
    except OSError:
        return
