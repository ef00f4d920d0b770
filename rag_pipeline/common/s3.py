"""One way to make an S3 client, shared by the S3 source and the S3 blob store.

Credentials come only from boto3's standard chain (environment, shared config and credentials
files, SSO, instance or container roles): the configuration file never holds keys. Throttling
and transient errors are retried by botocore's own retry modes; `RequestCounter` counts the API
calls and the HTTP attempts they took, so a run can report how many retries it needed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

# What a call through a client can raise: API errors, transport errors after the last retry.
S3_ERRORS = (BotoCoreError, ClientError, OSError)

RETRY_MODES = ("standard", "adaptive", "legacy")
DEFAULT_MAX_ATTEMPTS = 5
CONNECT_TIMEOUT_S = 10
READ_TIMEOUT_S = 60


@dataclass
class RequestCounter:
    """API calls made and HTTP attempts sent through one client (attempts - calls = retries).

    Counted from botocore's own events, so retries of calls that finally failed count too.
    Thread-safe: the S3 source sends per-object requests from a pool of threads through one
    client, and `+=` on an attribute is not atomic across threads."""

    calls: int = 0
    attempts: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def retries(self) -> int:
        return max(self.attempts - self.calls, 0)

    def _on_call(self, **_: Any) -> None:
        with self._lock:
            self.calls += 1

    def _on_send(self, **_: Any) -> None:
        with self._lock:
            self.attempts += 1


def make_client(
    *,
    endpoint_url: str | None = None,
    region: str | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    retry_mode: str = "standard",
    max_pool_connections: int = 16,
) -> tuple[Any, RequestCounter]:
    """A boto3 S3 client with bounded timeouts and botocore retries, and its request counter."""
    import boto3
    from botocore.config import Config as BotoConfig

    config = BotoConfig(
        retries={"mode": retry_mode, "total_max_attempts": max_attempts},  # attempts, first included
        connect_timeout=CONNECT_TIMEOUT_S,
        read_timeout=READ_TIMEOUT_S,
        max_pool_connections=max_pool_connections,
        # path-style works with every S3-compatible store (MinIO, moto) and with AWS
        s3={"addressing_style": "path"} if endpoint_url else None,
    )
    client = boto3.session.Session().client("s3", endpoint_url=endpoint_url, region_name=region, config=config)
    counter = RequestCounter()
    client.meta.events.register("before-call.s3", counter._on_call)
    client.meta.events.register("before-send.s3", counter._on_send)
    return client, counter


def split_s3_url(url: str) -> tuple[str, str]:
    """`s3://bucket/some/prefix` -> ('bucket', 'some/prefix/'); ValueError names what is wrong."""
    if not url.startswith("s3://"):
        raise ValueError(f"{url!r} is not an s3:// URL")
    bucket, _, prefix = url[len("s3://"):].partition("/")
    if not bucket:
        raise ValueError(f"{url!r} names no bucket; write s3://BUCKET/PREFIX")
    return bucket, folder_prefix(prefix)


def folder_prefix(prefix: str) -> str:
    """A prefix is a folder: 'docs' means 'docs/' (never also 'docs-old/...'); '' is the bucket."""
    return prefix if not prefix or prefix.endswith("/") else prefix + "/"


def error_code(exc: BaseException) -> str:
    """The S3 error code of a botocore ClientError ('' for anything else)."""
    response = getattr(exc, "response", None) or {}
    return str((response.get("Error") or {}).get("Code", ""))
