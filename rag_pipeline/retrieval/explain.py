"""Explaining a logged search: what it was asked (caller, groups, as-of, model), what each
candidate scored in each branch, and a replay against the index as of the search's time, which
must return the same chunks in the same order, because history is append-only. A second replay
against today's index shows what a later sync changed (which chunk, which rank)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg

from rag_pipeline import store
from rag_pipeline.embedding import Embedder, ModelError
from rag_pipeline.errors import UsageError
from rag_pipeline.retrieval.model_embedder import embedder_for_model
from rag_pipeline.retrieval.search import Hit, search


class ExplainError(UsageError):
    """The logged search cannot be found or replayed as asked; the message says why."""


class MalformedLogError(ExplainError):
    """The logged row does not have the shape a search writes; the message says what is wrong."""


@dataclass(frozen=True)
class Replay:
    as_of: datetime | None  # None: the live index now
    results: list[dict[str, Any]]
    differences: list[dict[str, Any]]

    @property
    def identical(self) -> bool:
        return not self.differences

    def to_dict(self) -> dict[str, Any]:
        return {"as_of": self.as_of, "identical": self.identical, "differences": self.differences,
                "results": self.results}


@dataclass(frozen=True)
class Explanation:
    search: dict[str, Any]
    replay: Replay  # as of the search's time
    now: Replay | None  # the same request against today's live index; None for an as-of search
    texts: list[dict[str, Any]]  # each returned chunk's logged text hash against the index's
    answers: list[dict[str, Any]] = field(default_factory=list)  # answers verified against this search

    @property
    def identical(self) -> bool:
        return self.replay.identical and all(t["unchanged"] for t in self.texts)

    def to_dict(self) -> dict[str, Any]:
        return {"search": self.search, "identical": self.identical, "replay": self.replay.to_dict(),
                "now": self.now.to_dict() if self.now else None, "texts": self.texts, "answers": self.answers}


def explain(conn: psycopg.Connection, embedder: Embedder, log_id: int) -> Explanation:
    try:
        return _explain(conn, embedder, log_id)
    except psycopg.errors.InsufficientPrivilege as exc:  # e.g. a rag_compliance or rag_reader login
        raise ExplainError(
            f"this database login may not both read the search log and replay searches ({exc.diag.message_primary}); "
            "run explain with the pipeline's login (rag_compliance reads the log through the search_results view)"
        ) from exc


def _explain(conn: psycopg.Connection, embedder: Embedder, log_id: int) -> Explanation:
    entry = store.search_log.logged_search(conn, log_id)
    if entry is None:
        raise ExplainError(f"no logged search with id {log_id}; ids are in search_log.id (and printed by searches with --json)")
    malformed = entry.pop("malformed", None)
    if malformed:
        raise MalformedLogError(
            f"search {log_id} is malformed in the search log ({malformed}): it was written before migration 017"
            " or with its checks off, so it cannot be explained or replayed; read it raw in search_log"
        )
    _check_model(conn, entry, embedder)
    then = entry["as_of"] or entry["searched_at"]
    replay = _replay(conn, embedder, entry, then, entry.get("model_id"))  # with the model it ran on
    now = _replay(conn, embedder, entry, None) if entry["as_of"] is None else None
    current = store.search_log.chunk_text_hashes(conn, [r["chunk_id"] for r in entry["results"]])
    purged = store.purge.purged_chunks(conn, [r["chunk_id"] for r in entry["results"]])
    texts = [
        {"rank": rank, "chunk_id": r["chunk_id"], "logged_sha256": r.get("text_sha256"),
         "current_sha256": current.get(r["chunk_id"]),
         "unchanged": r.get("text_sha256") is None or r.get("text_sha256") == current.get(r["chunk_id"]),
         "purged": purged.get(r["chunk_id"])}  # None, or when, why and by whom its text was purged
        for rank, r in enumerate(entry["results"], 1)
    ]
    return Explanation(search=entry, replay=replay, now=now, texts=texts,
                       answers=store.answers.answers_for_search(conn, log_id))


def _check_model(conn: psycopg.Connection, entry: dict[str, Any], embedder: Embedder) -> None:
    """The logged search's model must be loadable: the configured one, or one a model migration
    recorded (the index may have switched models since)."""
    recorded = store.models.model_by_id(conn, entry["model_id"]) if entry.get("model_id") is not None else None
    if recorded is not None and embedder_for_model(conn, recorded, embedder) is None:
        raise ExplainError(
            f"search {entry['id']} embedded its query with {entry['model_name']} ({entry['model_revision']}); "
            f"{embedder.identity.name} is configured: configure that model to replay it"
        )


def _replay(conn: psycopg.Connection, embedder: Embedder, entry: dict[str, Any], as_of: datetime | None,
            model_id: int | None = None) -> Replay:
    try:
        hits = search(conn, embedder, entry["query"], list(entry["groups"]), k=entry["k"], as_of=as_of, log=False,
                      model_id=model_id)
    except ModelError as exc:
        raise ExplainError(f"search {entry['id']} cannot be replayed: {exc}") from exc
    return Replay(as_of=as_of, results=[h.to_dict(with_text=False) for h in hits],
                  differences=differences(entry["results"], hits))


def differences(logged: list[dict[str, Any]], replayed: list[Hit]) -> list[dict[str, Any]]:
    """Every chunk whose rank differs between the log and the replay: moved, gone (no longer
    returned) or new (returned now, not then), in the order of the logged ranks first."""
    before = {r["chunk_id"]: rank for rank, r in enumerate(logged, 1)}
    after = {h.chunk_id: rank for rank, h in enumerate(replayed, 1)}
    where = {r["chunk_id"]: (r.get("uri"), r.get("version")) for r in logged}
    where.update({h.chunk_id: (h.uri, h.version_no) for h in replayed})
    found = []
    for chunk_id in [*before, *(c for c in after if c not in before)]:
        was, now = before.get(chunk_id), after.get(chunk_id)
        if was == now:
            continue
        change = "gone" if now is None else "new" if was is None else "moved"
        uri, version = where[chunk_id]
        found.append({"chunk_id": chunk_id, "uri": uri, "version": version, "change": change,
                      "logged_rank": was, "replayed_rank": now})
    return found
