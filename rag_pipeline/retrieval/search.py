"""Search over the index as the caller may see it: their groups and a point in time are part
of the SQL query, the query is embedded with the index's own model, and every search is logged
(caller, query, groups, as-of, model, each candidate's rank and score per branch, and a SHA-256 of
every returned text) so a past answer can be explained and replayed (`rag_pipeline.explain`).

The caller's groups are also set on the transaction (`rag.groups`): a connection acting as the
reader role then gets row-level security keyed by the same groups, a second line behind the
query's own filter."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg

from rag_pipeline import store
from rag_pipeline.cleaning.safety import as_indexed
from rag_pipeline.common.groups import group_problem
from rag_pipeline.common.text import storable
from rag_pipeline.embedding import Embedder, ModelError, multilingual
from rag_pipeline.errors import UsageError
from rag_pipeline.retrieval import rerank
from rag_pipeline.retrieval.model_embedder import embedder_for_model
from rag_pipeline.retrieval.section_refs import reference_keys
from rag_pipeline.store._sql import pipelined_transaction

MAX_QUERY_CHARS = 2000  # the model reads 256 tokens; a longer "query" is a document, not a question
MAX_GROUPS = 256  # a caller in more groups than this is a configuration error, not a user
MAX_USER_CHARS = 256
MAX_K = 1000  # results of one search: more is a scan of the index, not a question (each is logged)
RUNNERS_UP = 10  # candidates ranked after the k returned ones, kept in the log to explain the cut
BRANCHES = ("vector", "fulltext", "multilingual", "rerank")  # retrieval branches whose rank/score a hit carries
MODES = ("vector", "fulltext", "hybrid", "hybrid+rerank")
DEFAULT_MODE = "hybrid+rerank"
RERANK_DEPTH = 50  # fused candidates the rerank stage reorders before the top k are kept
# The multilingual list (store/multilingual_vectors.py) leaves out a non-English chunk less similar
# than this to the question by the multilingual model: below it, e5's neighbours are on another
# matter, and each would take a place in the fusion from the index's own lists. Fitted on the
# calibration half of evalsets/corpus (bench/README.md, "Multilingual vectors").
MULTILINGUAL_FLOOR = 0.76


class QueryError(UsageError):
    """The query cannot be searched as given; the message says why."""


@dataclass
class Hit:
    chunk_id: int
    source: str
    uri: str
    version_no: int
    version_id: int
    section_path: list[str]
    page_start: int | None
    page_end: int | None
    char_start: int
    char_end: int
    score: float  # fused rank score (reciprocal rank fusion of vector and full-text ranks)
    similarity: float  # cosine similarity of query and chunk: what refusal thresholds compare
    text: str
    acl_groups: list[str]
    status: str
    branches: dict[str, dict[str, Any]] = field(default_factory=dict)  # branch -> {"rank", "score", ...}
    # Why it ranked where it did besides the branches: BM25 term coverage and, after the rerank
    # stage, every rerank feature. Logged with the hit.
    features: dict[str, float] = field(default_factory=dict)

    @property
    def text_sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def to_dict(self, *, with_text: bool = True) -> dict[str, Any]:
        """The one serialised form of a hit: as the CLI prints it in JSON (a stable contract,
        DESIGN.md), the evaluation lists it, `explain` replays it and the search log keeps it
        (without the text, but with its SHA-256: what was shown, provably)."""
        record = {"uri": self.uri, "source": self.source, "version": self.version_no,
                  "section_path": self.section_path, "pages": [self.page_start, self.page_end],
                  "chunk_id": self.chunk_id, "score": round(self.score, 6), "similarity": round(self.similarity, 4),
                  "branches": self.branches, "text_sha256": self.text_sha256}
        if self.features:
            record["features"] = self.features
        if with_text:
            record["text"] = self.text
        return record


class Results(list[Hit]):
    """The hits of one search, in rank order, and the id of its search_log row (None when not
    logged): what `rag-pipeline explain` takes."""

    log_id: int | None = None
    model_id: int | None = None  # the index's model the query was embedded for
    calibration: dict[str, Any] | None = None  # the refusal calibration in force (refusal.threshold_from)


def _checked(conn: psycopg.Connection, indexed: dict[str, Any], embedder: Embedder) -> Embedder:
    """The embedder of the indexed model: the loaded one when it is that model, else the model as
    a migration recorded it (migration.embedders); else ModelError."""
    found = embedder_for_model(conn, indexed, embedder)
    if found is None:
        raise ModelError(
            f"the index was embedded with {indexed.get('name')} ({indexed.get('revision')}, {indexed.get('numerics', 'fp32')}); "
            f"queries must use that model but {embedder.identity.name} ({embedder.identity.numerics}) is configured"
        )
    return found


def search(
    conn: psycopg.Connection,
    embedder: Embedder,
    query: str,
    groups: list[str],
    *,
    k: int = 10,
    as_of: datetime | None = None,
    preview_run: str | None = None,
    log: bool = True,
    user: str | None = None,
    mode: str = DEFAULT_MODE,
    model_id: int | None = None,
) -> Results:
    """The k best chunks the groups may see, live or as of a time, by `mode`: one branch alone
    (vector, fulltext), both fused by reciprocal rank (hybrid), or fused then reordered by the
    deterministic rerank stage (hybrid+rerank, the default). `user` is the caller's identity as
    the application received it; it is logged as given. `model_id`: search that model's vectors
    instead of the view's model (a migration's gate, explain's replay of a logged search).

    Three round trips in all (psycopg's pipeline mode sends what needs no answer with the next
    statement that does): the transaction, the caller's groups and `store.search_prepare.prepare` (model,
    plan, full-text terms and statistics, refusal calibration, log id); the search statement
    (both branches, the fusion and the first full-text try); the log row and the commit. Only a
    full-text try whose bound fails adds a round trip (two at most per extra try)."""
    check_request(query, groups, user, k)
    if mode not in MODES:
        raise QueryError(f"unknown search mode {mode!r}; choose one of {', '.join(MODES)}")
    view = store.search.View(as_of=as_of, preview_run=preview_run, model_id=model_id)
    groups = sorted({g.strip() for g in groups if g and g.strip()})
    text = as_indexed(query)  # what is matched; the log keeps the query as it came
    with pipelined_transaction(conn):  # the groups set below hold for this transaction only
        store.search_log.set_session_groups(conn, groups)
        prepared = store.search_prepare.prepare(conn, text, groups, view, vector=mode != "fulltext",
                                        calibration_mode=DEFAULT_MODE, log=log,
                                        multilingual_model=multilingual.MODEL if mode.startswith("hybrid") else None)
        if prepared.model is not None:
            embedder = _checked(conn, prepared.model, embedder)
        model_id = None if prepared.model is None else int(prepared.model["id"])
        ranked: list[Hit] = []
        plan = prepared.plan
        fulltext: dict[str, Any] | None = None
        crossed: dict[str, Any] | None = None  # how the multilingual list ran, for the log
        # a query of no letter or digit ("🙂🙂", "!!! |||") has no term for full text and only
        # unknown word pieces for the model: any chunk it found would be chance, so none is
        if model_id is not None and groups and any(ch.isalnum() for ch in text):
            vector = embedder.encode([text])[0]
            reranked = mode == "hybrid+rerank"
            fetch = max(k, min(k + RUNNERS_UP, store.search.CANDIDATES))  # the same candidate pool as k alone
            depth = max(fetch, RERANK_DEPTH) if reranked else fetch
            listed, crossed = _multilingual(text, prepared, plan)
            rows = store.search.search_chunks(conn, vector, text, groups, model_id, depth, view,
                                              candidates=max(store.search.CANDIDATES, depth),
                                              mode="hybrid" if reranked else mode,
                                              plan=plan or store.search.EXACT, terms=prepared.terms,
                                              transaction=False, sections=reference_keys(text),
                                              migrated=prepared.migrated, corpus_chunks=prepared.corpus_chunks,
                                              multilingual=listed)
            ranked = [_hit(r) for r in rows]
            fulltext = rows[0].get("fulltext_plan") if rows else None
            if reranked:
                ranked = rerank_hits(text, ranked, rerank_weights(prepared.rerank))[:fetch]
        hits = Results(ranked[:k])
        hits.model_id, hits.calibration = model_id, prepared.calibration
        if log:
            hits.log_id = store.search_log.log_search(
                conn, query=query, groups=groups, as_of=as_of, model_id=model_id, k=k,
                results=[h.to_dict(with_text=False) for h in hits],
                candidates=[h.to_dict(with_text=False) for h in ranked[k:]],
                caller=user, searched_at=prepared.searched_at,
                strategy=_strategy(plan, fulltext, prepared.rerank if mode == "hybrid+rerank" else False, crossed),
                log_id=prepared.log_id,
            )
    return hits


def _multilingual(text: str, prepared: store.search_prepare.Prepared, plan: store.search.VectorPlan | None,
                  ) -> tuple[store.multilingual_vectors.Query | None, dict[str, Any] | None]:
    """The question's multilingual list, when the index holds multilingual vectors (a document not
    in English): the question encoded by that model (about 12 ms), read as the vector plan reads
    (exact for a selective caller, the index walk for a broad one); and its record for the log.

    A multilingual model that fails (a damaged install) leaves the list out rather than the
    search: the index's own model and full text still answer, and the log records why the list
    was missing, so an explanation of the result never hides it."""
    if not prepared.multilingual:
        return None, None
    record: dict[str, Any] = {"model": multilingual.MODEL, "floor": MULTILINGUAL_FLOOR}
    try:
        vector = multilingual.encode_queries([text])[0]
    except multilingual.MultilingualModelError as exc:
        return None, {**record, "unavailable": str(exc)[:500]}
    record["strategy"] = read = store.multilingual_vectors.strategy(plan, prepared.other_language_chunks)
    return store.multilingual_vectors.Query(vector, multilingual.MODEL, MULTILINGUAL_FLOOR, read), record


def _strategy(plan: store.search.VectorPlan | None, fulltext: dict[str, Any] | None,
              weights: dict[str, Any] | None | bool = False, crossed: dict[str, Any] | None = None,
              ) -> dict[str, Any] | None:
    """How the search ran, for the log: the vector plan's record, and in hybrid modes under
    `fulltext` the full-text branch's (terms taken rarest first, rows read, whether the MaxScore
    bound proved it exact). A full-text search logs the latter alone, under the same key. A
    reranked search logs under `rerank` the fitted weights it used (`weights`: the
    rerank_calibrations row's id and weights; None: the defaults; False: no rerank); a search
    over an index with multilingual vectors logs `crossed` (the list's model and floor, and why
    it was left out if it was) under `multilingual`."""
    found = plan.to_dict() if plan is not None else None
    if fulltext:
        found = {**(found or {}), "fulltext": fulltext}
    if weights is not False:
        used = {"calibration_id": None, "weights": rerank.WEIGHTS} if weights is None else weights
        found = {**(found or {}), "rerank": used}
    if crossed:
        found = {**(found or {}), "multilingual": crossed}
    return found


def rerank_weights(calibration: dict[str, Any] | None) -> rerank.Weights | None:
    """The weights of the index's rerank calibration in force (None: none stored, the defaults).
    A stored row that is not well-formed fails the search, naming it, rather than reorder it."""
    if calibration is None:
        return None
    try:
        return rerank.check_weights(calibration.get("weights"))
    except ValueError as exc:
        raise UsageError(f"rerank_calibrations row {calibration.get('calibration_id')} is unusable ({exc}); "
                         "run `rag-pipeline calibrate-rerank` to store valid weights") from exc


def check_request(query: str, groups: list[str], user: str | None, k: int | None = None) -> None:
    """Refuse what cannot be searched or logged faithfully, with the reason. Group names follow
    the one rule access files and S3 tags are held to (rag_pipeline.common.groups)."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K):
        raise QueryError(f"-k {k!r}: the number of results must be a whole number from 1 to {MAX_K:,}")
    if not isinstance(query, str):
        raise QueryError("the query must be text")
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(f"query is {len(query):,} characters long; the limit is {MAX_QUERY_CHARS:,}")
    if "\x00" in query:
        raise QueryError("the query contains a NUL character; remove it")
    if _lone_surrogate(query) is not None:
        raise QueryError(_not_utf8("the query", query))
    if len(groups) > MAX_GROUPS:
        raise QueryError(f"{len(groups):,} groups given; the limit is {MAX_GROUPS}")
    for group in groups:
        problem = group_problem(group.strip() if isinstance(group, str) else group)
        if problem is not None and (not isinstance(group, str) or group.strip()):  # blanks are dropped, as always
            raise QueryError(f"--groups: {problem}")
    if user is not None:
        if not isinstance(user, str) or len(user) > MAX_USER_CHARS or "\x00" in user:
            raise QueryError(f"the caller identity must be at most {MAX_USER_CHARS} characters without NUL")
        if _lone_surrogate(user) is not None:
            raise QueryError(_not_utf8("--user", user))


def _not_utf8(what: str, text: str) -> str:
    shown = storable(text)
    return (f"{what} is not valid UTF-8: {shown[:60] + '...' if len(shown) > 60 else shown} holds an undecodable "
            "byte or a lone surrogate (shown escaped); send it as UTF-8 text")


def _lone_surrogate(text: str) -> str | None:
    """The first lone surrogate in `text` (what undecodable bytes of an argument become), or None."""
    return next((c for c in text if "\ud800" <= c <= "\udfff"), None)


def rerank_hits(query: str, hits: list[Hit], weights: rerank.Weights | None = None) -> list[Hit]:
    """Reorder fused hits by the rerank stage (with the index's fitted `weights`; None: the
    defaults); each hit keeps its features and rerank score."""
    ordered = []
    for rank, (index, value, found) in enumerate(rerank.rerank(query, [as_candidate(h) for h in hits], weights), 1):
        hit = hits[index]
        hit.features = {**hit.features, **found, "rerank": round(value, 6)}
        hit.branches = {**hit.branches, "rerank": {"rank": rank, "score": round(value, 6)}}
        ordered.append(hit)
    return ordered


def as_candidate(hit: Hit) -> rerank.Candidate:
    """What the rerank stage reads of a fused hit (search and the fitting of its weights alike)."""
    return rerank.Candidate(hit.text, hit.section_path, hit.score, hit.features.get("term_coverage", 0.0),
                            hit.features.get("section_match", 0.0))


def _hit(row: dict[str, Any]) -> Hit:
    return Hit(
        chunk_id=row["chunk_id"],
        source=row["source"],
        uri=row["uri"],
        version_no=row["version_no"],
        version_id=row["version_id"],
        section_path=list(row["section_path"]),
        page_start=row["page_start"],
        page_end=row["page_end"],
        char_start=row["char_start"],
        char_end=row["char_end"],
        score=float(row["rrf"]),
        similarity=float(row["similarity"]),
        text=row["text"],
        acl_groups=list(row["acl_groups"]),
        status=row["status"],
        branches=_branches(row),
        features={"term_coverage": round(float(row.get("term_coverage") or 0.0), 6),
                  # how closely it is a part the question names by number (0: none named; not logged)
                  **({"section_match": float(row["section_match"])} if row.get("section_match") else {})},
    )


def _branches(row: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Rank and score of the hit in each branch that found it (`<branch>_rank`, `<branch>_score`
    columns; the rerank stage adds its own entry)."""
    found: dict[str, dict[str, Any]] = {}
    for name in BRANCHES:
        rank, score = row.get(f"{name}_rank"), row.get(f"{name}_score")
        if rank is None and score is None:
            continue
        found[name] = {"rank": rank, "score": None if score is None else round(float(score), 6)}
    return found
