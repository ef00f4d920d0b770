"""The blob store in a bucket (`blob_store: s3://bucket/prefix`): the same content addressing as
the local folder (`<prefix>ab/abcdef...`), so a version's blob is found by its SHA-256 alone,
whichever store holds it."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from rag_pipeline.blobs.base import BlobReadError, blob_name
from rag_pipeline.common.s3 import S3_ERRORS, RequestCounter, error_code, split_s3_url


class S3BlobStore:
    """Blobs as objects named by SHA-256. S3 writes are atomic (an object is either the whole
    upload or absent), and an existing blob is never rewritten: same name, same bytes."""

    def __init__(self, client: Any, url: str, counter: RequestCounter | None = None) -> None:
        self.client = client
        self.url = url
        self.bucket, self.prefix = split_s3_url(url)
        self.counter = counter or RequestCounter()

    def _key(self, sha256: str) -> str:
        return self.prefix + blob_name(sha256)

    def put(self, data: bytes) -> str:
        """Store `data` under its SHA-256. An object already there is trusted only when its
        stored SHA-256 checksum (or, for one uploaded without it, its bytes) match: one replaced
        or damaged is rewritten from these (the source's) bytes, so the store heals the next
        time the same bytes are read."""
        digest = hashlib.sha256(data)
        sha256 = digest.hexdigest()
        key = self._key(sha256)
        try:
            head = self.client.head_object(Bucket=self.bucket, Key=key, ChecksumMode="ENABLED")
            if self._intact(head, key, digest.digest(), len(data)):
                return sha256
        except S3_ERRORS as exc:
            if error_code(exc) not in ("404", "NoSuchKey", "NotFound"):
                raise BlobReadError(f"blob store {self.url}: cannot check {key}: {exc}") from exc
        try:
            self.client.put_object(Bucket=self.bucket, Key=key, Body=data,
                                   ChecksumAlgorithm="SHA256")  # the store verifies what it got
        except S3_ERRORS as exc:
            raise BlobReadError(f"blob store {self.url}: cannot write {key}: {exc}") from exc
        return sha256

    def _intact(self, head: dict[str, Any], key: str, digest: bytes, size: int) -> bool:
        if int(head.get("ContentLength") or 0) != size:
            return False
        stored = head.get("ChecksumSHA256")
        if stored:  # uploaded in one part with a SHA-256 checksum: what every put here sends
            return stored == base64.b64encode(digest).decode("ascii")
        body = self.client.get_object(Bucket=self.bucket, Key=key)["Body"]
        with body:
            return hashlib.sha256(body.read()).digest() == digest

    def get(self, sha256: str) -> bytes:
        key = self._key(sha256)
        try:
            body = self.client.get_object(Bucket=self.bucket, Key=key)["Body"]
            with body:
                data = body.read()
        except S3_ERRORS as exc:
            if error_code(exc) in ("404", "NoSuchKey", "NotFound"):
                raise FileNotFoundError(f"blob {sha256} is not in {self.url}") from exc
            raise BlobReadError(f"blob store {self.url}: cannot read {key}: {exc}") from exc
        if hashlib.sha256(data).hexdigest() != sha256:
            raise BlobReadError(f"blob {sha256} is corrupt in {self.url} ({key})")
        return data

    def delete(self, sha256: str) -> None:
        """Remove a blob whose bytes must not be kept (a refused file holding a private key);
        S3 deletes are idempotent, so a retried step deletes again harmlessly."""
        key = self._key(sha256)
        try:
            self.client.delete_object(Bucket=self.bucket, Key=key)
        except S3_ERRORS as exc:
            raise BlobReadError(f"blob store {self.url}: cannot delete {key}: {exc}") from exc
