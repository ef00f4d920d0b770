"""Which backend encodes on this machine: measured once, remembered, recorded with the run.

Why measure: the fastest runtime differs between CPUs (bfloat16 is ~6x slower than fp32 on AVX2
and ~2.6x faster with AMX; ONNX Runtime's fused kernels win on some CPUs and not on others), so
the choice is made from timings on this machine, never from assumptions. Under `auto` only a
backend whose vectors agree with torch fp32 by the identity rule (`backends.agreement`) may be
chosen, so the index's model identity never depends on the machine that happened to sync.

The measurement (a few seconds, plus a one-off ONNX export) is cached by weight digest, CPU
capability, thread count and library versions: a later process with the same key reuses it, and
a process that encodes nothing never measures.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rag_pipeline.embedding.backends import AUTO, PROBE_TEXTS, REFERENCE, Agreement, agreement
from rag_pipeline.embedding.digest_cache import cache_dir, read_cache, write_cache

CACHE_FILE = "backend-choice.json"
TIMING_ROUNDS = 2
Encode = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True)
class BackendChoice:
    """The backend that encodes, why, and what was measured (texts/s on the probe set and the
    minimum cosine with torch fp32 for every candidate)."""

    backend: str
    reason: str
    rates: dict[str, float] = field(default_factory=dict)
    min_cosine: dict[str, float] = field(default_factory=dict)
    same_neighbours: dict[str, bool] = field(default_factory=dict)

    def agreement(self, backend: str) -> Agreement | None:
        """How `backend`'s probe vectors compared with torch fp32 (None: not measured)."""
        if backend not in self.min_cosine:
            return None
        return Agreement(self.min_cosine[backend], self.same_neighbours.get(backend, False))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        rates = ", ".join(f"{name} {rate:.1f}/s" for name, rate in sorted(self.rates.items()))
        return f"{self.backend} ({self.reason}{'; ' + rates if rates else ''})"


def machine_key(weights_sha256: str, setting: str) -> str:
    """What a cached measurement is valid for: these weights on this CPU with these libraries.
    Computed without importing torch, so a process whose choice is cached and whose backend is
    ONNX Runtime never imports it."""
    from rag_pipeline.embedding.onnx_backend import GRAPH, cpu_threads, library_version

    return "|".join((weights_sha256, setting, cpu_capability(), str(cpu_threads()),
                     library_version("torch"), library_version("onnxruntime"), GRAPH))


def cpu_capability(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The vector instruction class of the CPU (torch's names: AVX512, AVX2, DEFAULT)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "DEFAULT"
    flags = set(next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), []))
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        return "AVX512"
    return "AVX2" if "avx2" in flags else "DEFAULT"


def cached(key: str) -> BackendChoice | None:
    entry = read_cache(cache_dir() / CACHE_FILE).get(key)
    if not isinstance(entry, dict):
        return None
    try:
        return BackendChoice(**entry)
    except TypeError:  # an entry of an older layout: measure again
        return None


def remember(key: str, choice: BackendChoice) -> None:
    path = cache_dir() / CACHE_FILE
    entries = read_cache(path)
    entries[key] = choice.to_dict()
    write_cache(path, entries)


def measure(candidates: dict[str, Encode], setting: str) -> BackendChoice:
    """Encode the probe set with every candidate (the reference first): agreement with the
    reference, then texts/s as the best of TIMING_ROUNDS interleaved rounds (interleaving keeps a
    burst of load on a busy machine from favouring one backend)."""
    texts = list(PROBE_TEXTS)
    reference = candidates[REFERENCE](texts)
    measured = {name: agreement(reference, encode(texts)) for name, encode in candidates.items() if name != REFERENCE}
    measured[REFERENCE] = Agreement(1.0, True)
    min_cosine = {name: round(m.min_cosine, 7) for name, m in measured.items()}
    same = {name: m.same_neighbours for name, m in measured.items()}
    best = best_seconds(candidates, texts, TIMING_ROUNDS)
    rates = {name: round(len(texts) / seconds, 2) for name, seconds in best.items()}
    if setting != AUTO:
        reason = "configured" if measured[setting].within_tolerance else \
            "configured; its vectors differ from torch fp32 beyond the tolerance: another model identity"
        return BackendChoice(setting, reason, rates, min_cosine, same)
    fastest = max((name for name in candidates if measured[name].within_tolerance), key=lambda name: rates[name])
    return BackendChoice(fastest, "fastest measured here of those matching torch fp32", rates, min_cosine, same)


def best_seconds(encoders: dict[str, Encode], texts: list[str], rounds: int) -> dict[str, float]:
    """Each encoder's best time over `texts` in `rounds` interleaved rounds (interleaving keeps a
    burst of load on a busy machine from favouring one of them)."""
    best = dict.fromkeys(encoders, float("inf"))
    for _ in range(rounds):
        for name, encode in encoders.items():
            started = time.perf_counter()
            encode(texts)
            best[name] = min(best[name], time.perf_counter() - started)
    return best


def choose(weights_sha256: str, setting: str, candidates: Callable[[], dict[str, Encode]]) -> BackendChoice:
    """The remembered choice for this machine, else a new measurement (remembered)."""
    key = machine_key(weights_sha256, setting)
    found = cached(key)
    if found is not None:
        return found
    choice = measure(candidates(), setting)
    remember(key, choice)
    return choice
