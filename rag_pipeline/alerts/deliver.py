"""Delivering one alert to every configured channel. A channel that fails does not stop the
others; the caller gets every failure named (channel and reason) and decides how loudly to fail."""

from __future__ import annotations

import json
import os
import smtplib
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from urllib.parse import urlsplit

from rag_pipeline.alerts.config import SMTP_PASSWORD_ENV, SMTP_USER_ENV, AlertsConfig
from rag_pipeline.errors import PipelineError

KINDS = ("gate_failed", "crashed", "cancelled", "stale")
MAX_REASON = 2000  # an error message can be a whole stack trace; the link leads to the rest


class AlertDeliveryError(PipelineError):
    """Some channel did not take the alert; the message names each one and why."""


@dataclass(frozen=True)
class Alert:
    kind: str  # one of KINDS
    source: str
    reason: str
    run_id: str | None = None
    link: str | None = None
    at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"alert kind {self.kind!r} is not one of {KINDS}")
        object.__setattr__(self, "reason", self.reason[:MAX_REASON])

    @property
    def subject(self) -> str:
        what = {"gate_failed": "evaluation gate failed", "crashed": "sync failed",
                "cancelled": "sync cancelled", "stale": "source is stale"}[self.kind]
        return f"[rag-pipeline] {self.source}: {what}"

    def text(self) -> str:
        lines = [self.subject, "", self.reason]
        if self.link:
            lines += ["", self.link]
        return "\n".join(lines)


def channels(config: AlertsConfig) -> list[str]:
    """The configured channels, as the alert sensors report them."""
    found = []
    if config.webhook_url():
        found.append("webhook")
    if config.smtp:
        found.append("smtp")
    return found


def send(alert: Alert, config: AlertsConfig) -> list[str]:
    """Deliver to every channel; returns the channels that took it. Raises AlertDeliveryError
    naming every channel that did not (after trying them all)."""
    delivered, problems = [], []
    url = config.webhook_url()
    if url:
        try:
            _post(url, alert, config.timeout_seconds)
            delivered.append("webhook")
        except (OSError, urllib.error.URLError) as exc:
            problems.append(f"webhook {urlsplit(url).hostname}: {exc}")
    if config.smtp:
        try:
            _mail(alert, config)
            delivered.append("smtp")
        except (OSError, smtplib.SMTPException) as exc:
            problems.append(f"smtp {config.smtp.host}:{config.smtp.port}: {exc}")
    if problems:
        raise AlertDeliveryError(f"alert {alert.subject!r} not delivered: " + "; ".join(problems)
                                 + (f" (delivered: {', '.join(delivered)})" if delivered else ""))
    return delivered


def _post(url: str, alert: Alert, timeout: float) -> None:
    body = json.dumps({**asdict(alert), "subject": alert.subject, "text": alert.text()}).encode("utf-8")
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json", "User-Agent": "rag-pipeline-alerts"})
    with urllib.request.urlopen(request, timeout=timeout) as response:  # http(s) only: the config checks the scheme
        if not 200 <= response.status < 300:
            raise OSError(f"answered HTTP {response.status}")


def _mail(alert: Alert, config: AlertsConfig) -> None:
    smtp = config.smtp
    assert smtp is not None
    message = EmailMessage()
    message["Subject"], message["From"], message["To"] = alert.subject, smtp.sender, ", ".join(smtp.to)
    message.set_content(alert.text())
    with smtplib.SMTP(smtp.host, smtp.port, timeout=config.timeout_seconds) as server:
        if smtp.starttls:
            server.starttls()
        user = os.environ.get(SMTP_USER_ENV)
        if user:
            server.login(user, os.environ.get(SMTP_PASSWORD_ENV, ""))
        server.send_message(message)
