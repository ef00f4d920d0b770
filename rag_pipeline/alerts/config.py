"""The `alerts` section of `rag_pipeline.yaml`: where alerts go and what "stale" means.

    alerts:
      webhook: https://hooks.example.com/rag      # POST, JSON body (RAG_PIPELINE_ALERT_WEBHOOK wins)
      smtp: {host: mail.example.com, port: 587, starttls: true,
             sender: rag@example.com, to: [ops@example.com]}   # login: RAG_PIPELINE_SMTP_USER / _PASSWORD
      ui_url: http://dagster.example.com:3000     # links to runs in alerts
      freshness_grace_minutes: 60                 # on top of a source's schedule interval

Secrets stay out of the file: a webhook whose URL carries a token can come from the environment,
and the SMTP login only does."""

from __future__ import annotations

import os
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rag_pipeline.common.config import Flag, NonEmptyText, Number, Text, shown

WEBHOOK_ENV = "RAG_PIPELINE_ALERT_WEBHOOK"
SMTP_USER_ENV = "RAG_PIPELINE_SMTP_USER"
SMTP_PASSWORD_ENV = "RAG_PIPELINE_SMTP_PASSWORD"


def http_url(value: str) -> str:
    """An http(s) URL with a host and no user:password part (that would be a credential in the file)."""
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"must be an http:// or https:// URL, got {shown(value)}")
    if parts.username or parts.password:
        raise ValueError(f"must not hold a user or password (put a secret URL in {WEBHOOK_ENV})")
    return value.strip()


class SmtpConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    host: NonEmptyText
    port: Annotated[int, Field(strict=True, ge=1, le=65535)] = 25
    starttls: Flag = False
    sender: NonEmptyText
    to: Annotated[tuple[NonEmptyText, ...], Field(min_length=1)]


class AlertsConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    webhook: Text | None = None
    smtp: SmtpConfig | None = None
    ui_url: Text = "http://127.0.0.1:3000"
    freshness_grace_minutes: Number = Field(60.0, ge=0.0, le=7 * 24 * 60)
    timeout_seconds: Number = Field(10.0, gt=0.0, le=120.0)

    @field_validator("webhook")
    @classmethod
    def _webhook(cls, value: str | None) -> str | None:
        return None if value is None else http_url(value)

    @field_validator("ui_url")
    @classmethod
    def _ui(cls, value: str) -> str:
        return http_url(value).rstrip("/")

    def webhook_url(self) -> str | None:
        """The environment's webhook (it may hold a token) wins over the file's."""
        env = os.environ.get(WEBHOOK_ENV, "").strip()
        return http_url(env) if env else self.webhook

    def run_link(self, run_id: str) -> str:
        return f"{self.ui_url}/runs/{run_id}"


