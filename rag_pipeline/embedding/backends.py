"""Which encoding of the configured model may embed the index, and when a backend is a model
change.

A backend (torch fp32, torch bfloat16, ONNX Runtime, ...) computes the same model with other
numerics. Its vectors may replace the reference torch fp32 vectors only if they agree on a
probe set: every vector's cosine with its reference at least COSINE_TOLERANCE, and every probe
text's TOP_K nearest probe texts the same. A backend that agrees shares the reference's
identity (numerics "fp32"); one that does not gets its own numerics in the model identity, so
the index treats it as a different model (a sync refuses to mix it with fp32 vectors).

The int8 encoder (ONNX Runtime's dynamic quantisation of the export) is another model file, not
another way of computing the same one: it is recorded as numerics "int8" whatever its probe
agreement, so its vectors are never mixed with fp32 ones, and `auto` never chooses it.

bfloat16 is only a candidate where the CPU computes it natively (AVX512-BF16 or AMX): on AVX2
it is emulated and about six times slower than fp32 (measured, bench/bench_encode.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

REFERENCE = "torch-fp32"
ONNX = "onnx-fp32"
BF16 = "torch-bf16"
ONNX_INT8 = "onnx-int8"  # opt-in only: never chosen by `auto`, always its own model identity
BACKENDS = (REFERENCE, ONNX, BF16, ONNX_INT8)
AUTO = "auto"  # the fastest backend that agrees with the reference, measured on this machine
REFERENCE_NUMERICS = "fp32"
INT8_NUMERICS = "int8"
COSINE_TOLERANCE = 0.9999
TOP_K = 10
BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")

# Texts of the kinds the index holds (policy prose, lists, tables, code, other languages), short
# and long, so padding and truncation are exercised.
PROBE_TEXTS = (
    "Who approves a business trip abroad?",
    "Travel policy > 2 Approval\nTrips abroad need the written approval of the head of department before booking.",
    "Passwords must be at least 14 characters long. Use a passphrase of several unrelated words.",
    "| grade | salary band | bonus |\n|---|---|---|\n| W1 | 32,000-38,000 EUR | 5 % |\n| W2 | 38,000-45,000 EUR | 7 % |",
    "def rotate(keys):\n    return [k for k in keys if not k.expired]",
    "Parental leave: employees may take up to 24 months of parental leave per child.",
    "Die Reisekosten werden innerhalb von 30 Tagen nach Einreichung der Belege erstattet.",
    "Les notes de frais doivent être soumises avant la fin du mois suivant.",
    "MFA is mandatory for email, the VPN and the freight management system.",
    "Discounts above 15% need the approval of the sales director.",
    "Lock your screen with Windows key and L whenever you leave your desk.",
    "Keep your laptop in your hand luggage when you fly.",
    "Onboarding: new staff receive their laptop and accounts on their first day.",
    "Report phishing with the Report Phishing button in Outlook.",
    "The quarterly freight volume grew by 12 percent compared with the previous year.",
    "Customer shipments must be insured above a declared value of 10,000 EUR.",
    "ok",
    "Remote work is allowed up to three days a week with the agreement of the team lead. " * 12,
    "Section 4.2.1 Safety checks before loading the truck: brakes, lights, tyres, load securing.",
    "An IBAN with a valid checksum is redacted before indexing.",
    "Expenses for meals are reimbursed up to the daily allowance of the destination country.",
    "What is the notice period for employees in their first year?",
    "Warehouse managers earn between 52,000 and 61,000 EUR a year.",
    "Backups are encrypted and kept for 90 days in a second data centre.",
)


@dataclass(frozen=True)
class Agreement:
    """How a candidate backend's probe vectors compare with the reference's."""

    min_cosine: float
    same_neighbours: bool

    @property
    def within_tolerance(self) -> bool:
        return self.min_cosine >= COSINE_TOLERANCE and self.same_neighbours


def agreement(reference: np.ndarray, candidate: np.ndarray, k: int = TOP_K) -> Agreement:
    """Compare two encodings of the same probe texts, row by row."""
    if reference.shape != candidate.shape or reference.ndim != 2:
        raise ValueError(f"probe vectors differ in shape: {reference.shape} vs {candidate.shape}")
    ref = reference / np.linalg.norm(reference, axis=1, keepdims=True)
    cand = candidate / np.linalg.norm(candidate, axis=1, keepdims=True)
    min_cosine = float(np.min(np.sum(ref * cand, axis=1)))
    return Agreement(min_cosine=min_cosine, same_neighbours=_neighbours(ref, k) == _neighbours(cand, k))


def _neighbours(unit: np.ndarray, k: int) -> list[frozenset[int]]:
    similarity = unit @ unit.T
    np.fill_diagonal(similarity, -np.inf)
    k = min(k, len(unit) - 1)
    return [frozenset(np.argsort(-row, kind="stable")[:k].tolist()) for row in similarity]


def numerics_for(backend: str, measured: Agreement | None) -> str:
    """The numerics recorded in the model identity for vectors from `backend`: the reference's
    when the backend is the reference or agrees within tolerance, else the backend's own name
    (a different model for the index). int8 is always its own."""
    if backend == ONNX_INT8:
        return INT8_NUMERICS
    if backend == REFERENCE or (measured is not None and measured.within_tolerance):
        return REFERENCE_NUMERICS
    return backend


def native_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether the CPU computes bfloat16 natively (else torch emulates it, slower than fp32)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return any(flag in flags for flag in BF16_CPU_FLAGS)


def candidate_backends(bf16_native: bool, onnx_supported: bool = True) -> list[str]:
    """Backends worth measuring on this machine, reference first: ONNX Runtime where the model
    is a stack it can run (see `onnx_backend.pooling_mode`), bfloat16 only where it is native."""
    return [REFERENCE] + [ONNX] * onnx_supported + [BF16] * bf16_native
