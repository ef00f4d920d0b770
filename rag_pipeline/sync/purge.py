"""`rag-pipeline purge`: remove the text and vectors of a document's versions for every role (content
shared by mistake, a legal order), keep their metadata and hashes, record who purged what, when
and why. Where the text lived, and what becomes of it:

* chunks (text, search prefix, vector, full-text terms and BM25 weights): emptied
  (store.purge.purge_version); the rows stay, so the search log and answers still resolve;
* the full-text statistics of the live index (fts_acl_terms, fts_acl_corpus): a purged live
  version's chunks are counted out, and a term no live chunk of its access set holds any more
  loses its row (store.bm25_stats.apply_purge);
* the stored source bytes (blob store): deleted, unless a version that is not purged (of any
  document) or a running sync still uses the same bytes; the record says which;
* work items of a running sync (parsed text, chunks, vectors in run_items): the purge is refused
  while a running sync holds the document, so nothing in flight can bring the text back.

The search log keeps what it always kept (chunk ids, URI, section path, a SHA-256 of each text),
and answers keep the drafts and quotes their callers verified: both are append-only records of
what was asked and shown, not copies of the index.

A purged live version stays live (a search finds nothing in it): a sync brings the document back
only when its bytes change (store.versions.LiveVersion.purged), never by re-parsing the same
bytes after an upgrade, so the source file itself must be removed or fixed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import psycopg

from rag_pipeline import store
from rag_pipeline.blobs import Blobs
from rag_pipeline.errors import UsageError

MAX_REASON = 2000


class PurgeRefusedError(UsageError):
    """The purge cannot be done as asked (no such version, a running sync holds the document, a
    reason that cannot be recorded); the message says why."""


@dataclass
class PurgeResult:
    source: str
    uri: str
    purged: list[dict[str, Any]] = field(default_factory=list)  # versions purged now
    already: list[dict[str, Any]] = field(default_factory=list)  # versions purged before
    same_content: list[int] = field(default_factory=list)  # versions not purged holding a purged one's bytes

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "uri": self.uri, "purged": self.purged, "already_purged": self.already,
                "same_content_not_purged": self.same_content}


def check_reason(reason: str) -> str:
    """The reason as recorded: one line of 1..MAX_REASON characters, no control characters
    (a newline, a NUL or an escape sequence would forge or garble the record as printed)."""
    text = reason.strip()
    if not text:
        raise PurgeRefusedError("--reason is empty: say why the content must go (it is recorded with the purge)")
    if len(text) > MAX_REASON:
        raise PurgeRefusedError(f"--reason is {len(text):,} characters; at most {MAX_REASON:,}")
    bad = next((c for c in text if ord(c) < 32 or 127 <= ord(c) < 160 or 0xD800 <= ord(c) <= 0xDFFF), None)
    if bad is not None:
        raise PurgeRefusedError(f"--reason holds {bad!r} (a control character, or a byte that is not UTF-8): give one"
                                " line of plain text")
    return text


def purge_document(conn: psycopg.Connection, blobs: Blobs, source: str, uri: str, version_no: int | None,
                   reason: str, purged_by: str | None) -> PurgeResult:
    """Purge `version_no` of the document (None: every version that holds content), in one
    transaction: the statistics counted out, the record written, the chunks emptied, the stored
    bytes deleted; a failure anywhere leaves the index as it was (a blob already deleted is then
    deleted again by the next attempt). Versions purged before are reported, not purged twice."""
    reason = check_reason(reason)
    result = PurgeResult(source, uri)
    with conn.transaction():
        versions = store.purge.lock_versions(conn, source, uri)
        targets = _targets(versions, source, uri, version_no)
        busy = store.purge.running_items(conn, source, uri)
        staged = [v for v in targets if v["status"] == "staged" and v["run_running"]]
        if busy or staged:
            runs = sorted({*busy, *(v["run_id"] for v in staged)})
            raise PurgeRefusedError(
                f"{source}/{uri} is being synced by run {', '.join(runs)} (still running); purge it once that run"
                " has finished (`rag-pipeline status`)")
        todo = [v for v in targets if v["purged_at"] is None]
        result.already = [_described(v, "already purged") for v in targets if v["purged_at"] is not None]
        store.bm25_stats.apply_purge(conn, [v["id"] for v in todo if v["status"] == "live"])
        now = conn.execute("SELECT now()").fetchone()[0]
        doomed: list[str] = []
        for v in todo:
            blob = _blob_fate(conn, v, [t["id"] for t in targets])
            count = store.purge.purge_version(conn, v["id"], reason, purged_by, blob)
            result.purged.append({**_described(v, "purged"), "purged_at": now, "reason": reason, "chunks": count,
                                  "blob": blob, "statistics": "counted out" if v["status"] == "live" else "not counted"})
            if blob == "deleted":
                doomed.append(v["blob_sha256"])
        for v in targets:  # a purge cut short after its blob went, or bytes stored again since
            if v["purged_at"] is not None and v["blob_sha256"] and not store.purge.blob_users(
                    conn, v["blob_sha256"], [t["id"] for t in targets]):
                doomed.append(v["blob_sha256"])
        gone = {v["checksum"] for v in targets if v["checksum"]}
        result.same_content = [v["version_no"] for v in versions if v["checksum"] in gone and v not in targets
                               and v["purged_at"] is None and v["status"] != "discarded"]
        for sha256 in dict.fromkeys(doomed):
            blobs.delete(sha256)  # inside the transaction: should it fail, nothing is recorded
    return result


def _targets(versions: list[dict[str, Any]], source: str, uri: str, version_no: int | None) -> list[dict[str, Any]]:
    """The versions the request names: every content version, or the one numbered `version_no`
    (a discarded attempt holds no number)."""
    if not versions:
        raise PurgeRefusedError(f"no document {source}/{uri} in the index")
    if version_no is None:
        return [v for v in versions if v["kind"] == "content"]
    found = [v for v in versions if v["version_no"] == version_no and v["status"] != "discarded"]
    if not found:
        numbers = sorted({v["version_no"] for v in versions if v["status"] != "discarded"})
        raise PurgeRefusedError(f"{source}/{uri} has no version {version_no} (its versions: "
                                f"{', '.join(map(str, numbers)) or 'none'}); see `rag-pipeline history {uri}`")
    if found[0]["kind"] != "content":
        raise PurgeRefusedError(f"{source}/{uri} version {version_no} is a tombstone (the file was gone): it holds no"
                                " content to purge")
    return found


def _blob_fate(conn: psycopg.Connection, version: dict[str, Any], purged_now: list[int]) -> str:
    """What becomes of the version's stored source bytes: 'deleted', 'none' (none were kept), or
    'kept: <who else uses them>'."""
    if not version["blob_sha256"]:
        return "none"
    users = store.purge.blob_users(conn, version["blob_sha256"], purged_now)
    return "deleted" if not users else "kept: the same bytes are " + ", ".join(users)


def _described(version: dict[str, Any], what: str) -> dict[str, Any]:
    return {"version": version["version_no"], "status": version["status"], "result": what,
            "purged_at": version["purged_at"], "reason": version["reason"]}
