"""S3 source: a paginated listing of a bucket prefix with ETag+size fingerprints and ACL groups
from the objects themselves.

Where an object's groups come from, first match wins:
1. its object tag `rag-groups` (groups separated by spaces or commas, e.g. `hr finance`), when
   `object_acl` has `tag`;
2. its user metadata `rag-groups` (`x-amz-meta-rag-groups`), when `object_acl` has `metadata`;
3. `_access.yaml` objects under the prefix, exactly as access files in folders;
4. the source's `default_groups`;
5. nobody (default deny).
A tag or metadata key that is present but empty means "visible to nobody".

The listing is all-or-nothing (ListingError), so a failed, timed-out or cut-short listing can
never be mistaken for deletions. Objects are read with If-Match on the listed ETag, so the bytes
indexed are the bytes the listing described.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice
from pathlib import PurePosixPath
from typing import Any

from rag_pipeline.common.groups import group_problem
from rag_pipeline.common.s3 import S3_ERRORS, RequestCounter, error_code, folder_prefix
from rag_pipeline.sources.access_files import (
    ACCESS_FILE,
    MAX_ACCESS_FILE_BYTES,
    AccessFileError,
    AccessResolver,
    AccessRule,
    check_overrides,
    is_lookalike,
    lookalike_error,
    parse_access_file,
    with_default_groups,
)
from rag_pipeline.sources.base import ListingError, ObjectReadError, SkippedObject, SourceObject, is_denied

GROUPS_TAG = "rag-groups"
GROUPS_METADATA = "rag-groups"  # sent as x-amz-meta-rag-groups
OBJECT_ACL_KINDS = ("tag", "metadata")
PAGE_SIZE = 1000  # the most S3 returns per page
READ_BLOCK = 1024 * 1024
GONE_CODES = ("NoSuchKey", "404", "NotFound")
DEFAULT_WORKERS = 16  # per-object requests in flight (config: concurrent_requests)
LOOKAHEAD_PER_WORKER = 4  # lookups queued ahead of the consumer per worker


@dataclass(frozen=True)
class ListedKey:
    key: str
    etag: str  # without quotes; multipart ETags keep their '-N' suffix
    size: int

    @property
    def fingerprint(self) -> str:
        """Changes whenever the object's bytes change (a new upload gets a new ETag, multipart
        or not); may also change when they did not (a multipart re-upload with other part
        sizes), which the plan settles by comparing content SHA-256."""
        return f"etag:{self.etag}:{self.size}"


def parse_groups(value: str) -> tuple[str, ...]:
    """'hr finance,hr' -> ('finance', 'hr'): separated by spaces or commas (S3 tag values cannot
    hold commas; metadata may hold either), de-duplicated."""
    return tuple(sorted(set(value.replace(",", " ").split())))


def key_problem(rel: str) -> str | None:
    """Why a key (relative to the prefix) cannot be a document URI, or None.

    Empty or '.' segments (leading or doubled slashes) make two different keys look like one
    folder path, so the access file of one folder could be taken for another's."""
    segments = rel.split("/")
    if any(s in ("", ".") for s in segments):
        return ("its key has an empty or '.' path segment (a leading, trailing or doubled '/'), which "
                "makes its folder ambiguous for access files; rename the object")
    return None


class S3Source:
    """Lists `s3://bucket/prefix` with one S3 client; URIs are keys relative to the prefix."""

    def __init__(
        self,
        name: str,
        client: Any,
        bucket: str,
        prefix: str = "",
        *,
        counter: RequestCounter | None = None,
        deny: Sequence[str] = (),
        default_groups: Sequence[str] = (),
        object_acl: Sequence[str] = OBJECT_ACL_KINDS,
        max_bytes: int | None = None,
        page_size: int = PAGE_SIZE,
        workers: int = DEFAULT_WORKERS,
    ) -> None:
        self.name = name
        self.client = client
        self.bucket = bucket
        self.prefix = folder_prefix(prefix)
        self.counter = counter or RequestCounter()
        self.deny = tuple(deny)
        self.default_groups = tuple(sorted(set(default_groups)))
        self.object_acl = tuple(object_acl)
        self.max_bytes = max_bytes
        self.page_size = page_size
        self.workers = workers
        self._listed: dict[str, ListedKey] = {}

    @property
    def request_stats(self) -> dict[str, int]:
        """S3 API calls and retries so far, for the run's report."""
        return {"s3_calls": self.counter.calls, "s3_retries": self.counter.retries}

    def list_objects(self) -> Iterator[SourceObject | SkippedObject]:
        keys = self._list_keys()
        resolver = self._resolver(keys)
        candidates: list[tuple[str, ListedKey]] = []
        for listed in keys:
            rel = listed.key[len(self.prefix):]
            if rel == "" or (rel.endswith("/") and listed.size == 0):
                continue  # the prefix itself or a console "folder" marker: not a document
            if rel.rsplit("/", 1)[-1] == ACCESS_FILE or is_denied(rel, self.deny):
                continue
            problem = key_problem(rel)
            if problem:
                yield SkippedObject(rel, f"{self._where(listed.key)}: {problem}")
                continue
            if self.max_bytes is not None and listed.size > self.max_bytes:
                yield SkippedObject(rel, (
                    f"{self._where(listed.key)} is {listed.size} bytes, over the limits.max_bytes limit of "
                    f"{self.max_bytes} bytes; it was not downloaded. Split it or raise limits.max_bytes"
                ))
                continue
            candidates.append((rel, listed))
        for (rel, listed), own in zip(candidates, self._own_groups_in_order(candidates), strict=True):
            if isinstance(own, SkippedObject):
                yield own
                continue
            self._listed[rel] = listed
            groups = own if own is not None else resolver.groups_for(rel)
            yield SourceObject(uri=rel, checksum=listed.fingerprint, size=listed.size, acl_groups=groups)

    def read(self, uri: str) -> bytes:
        """The object's bytes, only if it still has the listed ETag; streamed, never more than
        the size limit. ObjectReadError when it vanished or changed since the listing."""
        listed = self._listed.get(uri)
        key = listed.key if listed else self.prefix + uri
        where = self._where(key)
        extra = {"IfMatch": f'"{listed.etag}"'} if listed else {}
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=key, **extra)
            length = int(response.get("ContentLength") or 0)
            if self.max_bytes is not None and length > self.max_bytes:
                response["Body"].close()
                raise ObjectReadError(f"{where} grew to {length} bytes, over limits.max_bytes; not downloaded")
            return self._read_body(response["Body"], where)
        except ObjectReadError:
            raise
        except S3_ERRORS as exc:
            raise self._read_error(exc, where) from exc

    def _read_body(self, body: Any, where: str) -> bytes:
        limit = self.max_bytes if self.max_bytes is not None else None
        blocks: list[bytes] = []
        total = 0
        with body:
            while block := body.read(READ_BLOCK):
                total += len(block)
                if limit is not None and total > limit:
                    raise ObjectReadError(f"{where} is larger than limits.max_bytes; download stopped")
                blocks.append(block)
        return b"".join(blocks)

    def _read_error(self, exc: BaseException, where: str) -> Exception:
        code = error_code(exc)
        if code in GONE_CODES:
            return ObjectReadError(f"{where} was deleted after it was listed; it counts as gone on the next run")
        if code in ("PreconditionFailed", "412"):
            return ObjectReadError(f"{where} changed after it was listed; the next run picks up the new content")
        # The store is unreachable or refuses us: stop the source, do not quarantine everything.
        return ListingError(f"source {self.name!r}: cannot download {where}: {exc}")

    def _where(self, key: str) -> str:
        """The object's URL for messages; a key with control characters is shown escaped."""
        return f"s3://{self.bucket}/{key if key.isprintable() else ascii(key)[1:-1]}"

    # ------------------------------------------------------------------ listing

    def _list_keys(self) -> list[ListedKey]:
        """Every key under the prefix, all pages, or ListingError: a listing cut short must never
        look complete."""
        keys: list[ListedKey] = []
        try:
            paginator = self.client.get_paginator("list_objects_v2")
            pages = paginator.paginate(Bucket=self.bucket, Prefix=self.prefix,
                                       PaginationConfig={"PageSize": self.page_size})
            for page in pages:
                for item in page.get("Contents") or ():
                    keys.append(ListedKey(item["Key"], str(item.get("ETag", "")).strip('"'), int(item["Size"])))
                if page.get("IsTruncated") and not page.get("NextContinuationToken"):
                    raise ListingError(f"source {self.name!r}: the listing of s3://{self.bucket}/{self.prefix} "
                                       "was cut short (truncated page without a continuation token)")
        except ListingError:
            raise
        except S3_ERRORS as exc:
            raise ListingError(
                f"source {self.name!r}: listing s3://{self.bucket}/{self.prefix} failed after "
                f"{len(keys)} objects and {self.counter.retries} retries: {exc}; nothing is tombstoned"
            ) from exc
        return keys

    def _resolver(self, keys: list[ListedKey]) -> AccessResolver:
        """Access files under the prefix, as for folders; default_groups act as an implicit
        root access file that any real one setting `groups` replaces. A key with a segment spelled
        like an access file but not one, or a `files:` key naming no object of its folder, stops
        the listing."""
        rules: dict[str, AccessRule] = {}
        names: dict[str, list[str]] = {}  # folder -> names of the objects directly in it
        for listed in keys:
            rel = listed.key[len(self.prefix):]
            if any(is_lookalike(segment) for segment in rel.split("/")):
                raise ListingError(f"source {self.name!r}: {lookalike_error(self._where(listed.key))}")
            folder, _, name = rel.rpartition("/")
            names.setdefault(folder, []).append(name)
        for listed in keys:
            rel = listed.key[len(self.prefix):]
            if rel.rsplit("/", 1)[-1] != ACCESS_FILE:
                continue
            where = self._where(listed.key)
            if key_problem(rel):
                raise ListingError(f"source {self.name!r}: access file {where!r}: {key_problem(rel)}")
            folder = str(PurePosixPath(rel).parent)
            folder = "" if folder == "." else folder
            rules[folder] = self._access_rule(listed, where)
            try:
                check_overrides(rules[folder], where, names.get(folder, []))
            except AccessFileError as exc:
                raise ListingError(f"source {self.name!r}: {exc}") from exc
        root = with_default_groups(rules.get(""), self.default_groups)
        if root is not None:
            rules[""] = root
        resolver = AccessResolver()
        for folder, rule in rules.items():
            resolver.add(folder, rule)
        return resolver

    def _access_rule(self, listed: ListedKey, where: str) -> AccessRule:
        # A broken or unreadable ACL must not silently widen or narrow access: stop this source.
        if listed.size > MAX_ACCESS_FILE_BYTES:
            raise ListingError(f"source {self.name!r}: {where}: access file larger than 1 MiB; it cannot be right")
        try:
            body = self.client.get_object(Bucket=self.bucket, Key=listed.key)["Body"]
            with body:
                text = body.read(MAX_ACCESS_FILE_BYTES + 1).decode("utf-8")
            return parse_access_file(text, where)
        except AccessFileError as exc:
            raise ListingError(f"source {self.name!r}: {exc}") from exc
        except UnicodeDecodeError as exc:
            raise ListingError(f"source {self.name!r}: {where}: not UTF-8 text ({exc.reason}); save it as UTF-8") from exc
        except S3_ERRORS as exc:
            raise ListingError(f"source {self.name!r}: cannot read access file {where}: {exc}") from exc

    def _own_groups_in_order(
        self, candidates: list[tuple[str, ListedKey]]
    ) -> Iterator[tuple[str, ...] | SkippedObject | None]:
        """Each candidate's own groups, in listing order, looked up by `workers` threads at once
        (one request per object and run is what a sync of an unchanged bucket costs, so doing
        them one by one makes the request latency the run time).

        At most a few batches are in flight ahead of the consumer: a failing lookup (or a
        consumer that stops) cancels the rest instead of sending thousands more requests, and
        only the lookups already running are waited for (each bounded by botocore's timeouts
        and retries). No per-object request at all when `object_acl` is empty."""
        if not self.object_acl:
            yield from (None for _ in candidates)
            return
        pending: deque[Future[tuple[str, ...] | SkippedObject | None]] = deque()
        queue = iter(candidates)
        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix=f"s3-acl-{self.name}")
        try:
            for candidate in islice(queue, self.workers * LOOKAHEAD_PER_WORKER):
                pending.append(pool.submit(self._own_groups, candidate))
            while pending:
                result = pending.popleft().result()  # re-raises the lookup's ListingError here
                for candidate in islice(queue, 1):
                    pending.append(pool.submit(self._own_groups, candidate))
                yield result
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _own_groups(self, candidate: tuple[str, ListedKey]) -> tuple[str, ...] | SkippedObject | None:
        """The object's own groups (tag, then metadata), None when it names none."""
        rel, listed = candidate
        try:
            if "tag" in self.object_acl:
                tags = self.client.get_object_tagging(Bucket=self.bucket, Key=listed.key).get("TagSet") or []
                for tag in tags:
                    if tag.get("Key") == GROUPS_TAG:
                        return self._checked(parse_groups(str(tag.get("Value", ""))), listed, f"tag {GROUPS_TAG}")
            if "metadata" in self.object_acl:
                head = self.client.head_object(Bucket=self.bucket, Key=listed.key, IfMatch=f'"{listed.etag}"')
                value = (head.get("Metadata") or {}).get(GROUPS_METADATA)
                if value is not None:
                    return self._checked(parse_groups(value), listed, f"metadata {GROUPS_METADATA}")
        except S3_ERRORS as exc:
            code = error_code(exc)
            if code in GONE_CODES or code in ("PreconditionFailed", "412"):
                return SkippedObject(rel, f"{self._where(listed.key)} was deleted or replaced while "
                                          "being listed; the next run sees its new state")
            raise ListingError(
                f"source {self.name!r}: cannot read the access groups of {self._where(listed.key)}: {exc}"
                + ("; grant s3:GetObjectTagging and s3:GetObject, or set object_acl: []" if code == "AccessDenied" else "")
            ) from exc
        return None

    def _checked(self, groups: tuple[str, ...], listed: ListedKey, origin: str) -> tuple[str, ...]:
        """The groups an object names for itself, held to the rule search holds them to: a name no
        caller could ever match stops the listing, naming the object and where the name came from."""
        for group in groups:
            problem = group_problem(group)
            if problem:
                raise ListingError(f"source {self.name!r}: {self._where(listed.key)} ({origin}): {problem}; "
                                   "fix the object's groups or this source is not synced")
        return groups
