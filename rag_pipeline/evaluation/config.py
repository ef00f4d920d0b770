"""The `evaluation` section of `rag_pipeline.yaml`."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rag_pipeline.common.config import BlankIsDefault, NullIsDefault, Number, PathText, PositiveWhole

# every metric the gate computes has a bound (a given threshold replaces its default)
DEFAULT_THRESHOLDS = {"source_recall": 0.8, "evidence_recall": 0.8, "ndcg": 0.5, "mrr": 0.5, "refusal_accuracy": 0.75,
                      # each direction on its own, so a gate cannot pass by refusing everything or nothing
                      "refusal_accuracy_must_refuse": 0.5, "refusal_accuracy_must_answer": 0.5,
                      "acl_leaks": 0, "superseded_hits": 0,
                      # of the answer cases: a set without them scores 1.0 on each (nothing to get wrong);
                      # set under the figures measured on evalsets/answers (0.87 / 0.92 / 0.83 / 0.84)
                      "citation_accuracy": 0.8, "unsupported_recall": 0.8, "unsupported_precision": 0.75,
                      "citation_coverage": 0.75}


class EvaluationConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    eval_set: Annotated[PathText | None, BlankIsDefault] = None  # relative to the config file's folder
    k: PositiveWhole = 10
    thresholds: Annotated[dict[str, Annotated[Number, Field(ge=0.0)]], NullIsDefault] = Field(
        default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    # first result's similarity under which the index "has no answer", until calibrated (refusal.py)
    refusal_score: Number = Field(0.35, ge=-1.0, le=1.0)

    @field_validator("thresholds")
    @classmethod
    def _over_the_defaults(cls, given: dict[str, float]) -> dict[str, float]:
        return {**DEFAULT_THRESHOLDS, **given}
