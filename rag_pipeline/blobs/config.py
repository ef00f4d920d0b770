"""The `blob_store` section of `rag_pipeline.yaml`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from rag_pipeline.common.config import Text, shown
from rag_pipeline.common.s3 import split_s3_url


class BlobStoreConfig(BaseModel):
    """`blob_store: s3://bucket/prefix`, or a mapping with url, endpoint_url and region."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: Text
    endpoint_url: Text | None = None
    region: Text | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"url": data}
        if not isinstance(data, dict):
            raise ValueError("must be s3://BUCKET/PREFIX or a mapping with url, endpoint_url, region")
        return data

    @model_validator(mode="after")
    def _an_s3_url(self) -> BlobStoreConfig:
        try:
            split_s3_url(self.url)
        except ValueError as exc:
            reason = str(exc).replace(repr(self.url), shown(self.url))  # a huge URL is quoted short
            raise ValueError(f"{reason}; the local folder is the default, omit the key for it") from exc
        return self
