"""The steps of a model migration, shared by `rag-pipeline migrate-model` and the Dagster job:
resolve the new model, fill its vectors, build its vector index, judge both models, switch.
Plus the rollback (switch back, after embedding what was published since) and the prune.

A migration is a row of model_migrations: a second run while one is `running` continues it
(same model) or is refused (another model). A failed gate ends it (`gate_failed`) and leaves the
live model untouched; its vectors stay until `db prune-models`, so a later run only re-judges.

Syncs and the switch: the switch first waits (bounded) for the syncs running when it starts to
finish, then catches up the chunks they published, then switches under the switch lock. A sync
that still publishes after the switch with the old model is refused at publish (nothing mixed,
nothing published: it runs again with the new model configured)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg

from rag_pipeline import store
from rag_pipeline.config import Config
from rag_pipeline.embedding import Embedder, ModelError, embedder_for, load_embedder
from rag_pipeline.errors import PipelineError, UsageError
from rag_pipeline.migration import fill, gate, rechunk
from rag_pipeline.retrieval.model_embedder import embedder_for_model

SWITCH_TRIES = 5  # catch-up and switch attempts while syncs keep publishing
MIN_MODEL_TOKENS = 32  # below this, re-chunked pieces could not hold a path and a sentence
RECHUNK_ROUNDS = 3  # fill, re-chunk what the new model cannot read whole, fill again (syncs may add more)
SYNC_WAIT_SECONDS = 600.0

Progress = Callable[[str, int, int], None]  # (step, done, total)


def _no_progress(step: str, done: int, total: int) -> None:
    return None


class MigrationError(PipelineError):
    """The migration cannot go on; the message says why and what to do."""


@dataclass
class Target:
    """The model a migration goes to: its embedder, recorded id and how it was named."""

    model_id: int
    embedder: Embedder
    model: str | None
    backend: str


@dataclass
class Outcome:
    """What a migration, rollback or prune did: what the CLI prints and the job's metadata shows."""

    action: str  # migrate, rollback
    migration_id: int | None
    from_model: int | None
    to_model: int | None
    status: str  # switched, gate_failed, filled (no switch asked)
    fill: dict[str, Any] = field(default_factory=dict)
    gate: dict[str, Any] | None = None
    switch: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "migration_id": self.migration_id, "from_model": self.from_model,
                "to_model": self.to_model, "status": self.status, "fill": self.fill, "gate": self.gate,
                "switch": self.switch}


def live_model(conn: psycopg.Connection) -> int:
    found = store.model_switches.index_model_id(conn)
    if found is None:
        raise UsageError("the index has no live content yet: there is nothing to migrate; configure the model and sync")
    return found


def resolve_target(conn: psycopg.Connection, config: Config, to: str, backend: str | None) -> Target:
    """The new model, loaded offline and recorded; refused when it cannot load or is the index's
    model already. The live model's own source is recorded too, so a rollback can load it."""
    section = config.embedding
    backend = backend or section.backend
    try:
        embedder = load_embedder(to, section.device, section.batch_size, backend)
        identity = embedder.identity  # reads the folder (and measures a backend's numerics once)
    except ModelError as exc:
        raise UsageError(f"--to {to!r} --backend {backend!r}: {exc}") from exc
    if identity.max_tokens < MIN_MODEL_TOKENS:
        raise UsageError(f"--to {to!r} reads at most {identity.max_tokens} tokens: too few for a section path and a "
                         f"sentence; choose a model that reads at least {MIN_MODEL_TOKENS}")
    current = live_model(conn)
    model_id = store.models.register_model(conn, identity.to_dict())
    if model_id == current:
        raise UsageError(f"{identity.name} ({identity.numerics}) is the index's model already: nothing to migrate "
                         "(another numeric format is another model: try --backend torch-bf16)")
    configured = embedder_for(section)
    recorded = store.models.model_by_id(conn, current) or {}
    if store.model_switches.model_source(conn, current) is None and embedder_for_model(conn, recorded, configured):
        store.model_switches.record_source(conn, current, section.model, section.backend)
    store.model_switches.record_source(conn, model_id, to, backend)
    return Target(model_id, embedder, to, backend)


def begin(conn: psycopg.Connection, from_model: int, to_model: int, kind: str) -> int:
    """The running migration to `to_model` (continued after a kill), or a new one."""
    running = store.model_switches.running_migration(conn)
    if running is not None:
        if running["to_model"] == to_model and running["from_model"] == from_model:
            return int(running["id"])
        if running["from_model"] != from_model:  # the index switched since: that one is over
            store.model_switches.update_migration(conn, running["id"], status="failed",
                                                  error="the index's model changed while it ran")
        else:
            raise MigrationError(f"migration {running['id']} to model {running['to_model']} is running (or was killed): "
                                 "run it again to finish it, or prune its vectors first")
    return store.model_switches.start_migration(conn, from_model, to_model, kind)


def embed_all(conn: psycopg.Connection, started: Started, progress: Progress,
              max_batches: int | None = None, batch: int = fill.BATCH) -> fill.FillProgress:
    """Fill the target's vectors (resumable; chunks it cannot read whole re-chunked first), then
    build its vector index."""

    def report(p: fill.FillProgress) -> None:
        progress("embed", p.done, p.total)
        store.model_switches.update_migration(conn, started.migration_id, counts={"fill": p.to_dict()})

    done = fill_fitted(conn, started, report, progress, max_batches=max_batches, batch=batch)
    if max_batches is None:
        store.model_vectors.ensure_index(conn, started.target.embedder.identity.dimension)
    return done


def fill_fitted(conn: psycopg.Connection, started: Started, report: fill.FillReport = lambda p: None,
                progress: Progress = _no_progress, *, max_batches: int | None = None,
                batch: int = fill.BATCH) -> fill.FillProgress:
    """Fill the target's vectors; the documents of chunks longer than the target reads are
    re-chunked from their stored chunks and published (rechunk.py), then the fill goes on with
    their new chunks. Later rounds only meet what syncs published meanwhile."""
    target, done = started.target, None
    for _ in range(RECHUNK_ROUNDS):
        done = fill.fill(conn, target.model_id, target.embedder, report=report, max_batches=max_batches, batch=batch,
                         earlier=done)
        if not done.too_long or max_batches is not None:
            break
        cut = rechunk.rechunk(conn, started.migration_id, done.too_long, started.from_model, started.live_embedder(conn),
                              target.embedder, wait_seconds=started.config.source_wait_seconds, progress=progress)
        store.model_switches.update_migration(conn, started.migration_id, counts={"rechunk": cut.to_dict()})
        done.rechunked += cut.documents
        done.rechunked_from += cut.chunks_before
        done.rechunked_to += cut.chunks_after
    assert done is not None  # RECHUNK_ROUNDS >= 1
    if done.too_long and max_batches is None:
        raise MigrationError(
            f"{len(done.too_long)} live chunks are still longer than model {target.model_id} reads after "
            f"{RECHUNK_ROUNDS} rounds of re-chunking (syncs kept publishing them?); nothing was switched: run it again")
    return done


def wait_for_syncs(conn: psycopg.Connection, seconds: float, progress: Progress) -> list[str]:
    """Wait until the syncs running now have finished (or `seconds` passed); those still running."""
    deadline = time.monotonic() + seconds
    running = _running(conn)
    while running and time.monotonic() < deadline:
        progress("wait for syncs", 0, len(running))
        time.sleep(0.5)
        running = [r for r in _running(conn) if r in running]
    return running


def _running(conn: psycopg.Connection) -> list[str]:
    runs = store.runs.with_abandoned(conn, store.runs.recent_runs(conn, 50))
    return [r["run_id"] for r in runs if r["status"] == "running"]


def switch(conn: psycopg.Connection, started: Started, progress: Progress,
           wait_seconds: float = SYNC_WAIT_SECONDS) -> dict[str, Any]:
    """Catch up what syncs published, then switch in one transaction; retried while publishes
    keep adding chunks."""
    wait_for_syncs(conn, wait_seconds, progress)
    for _ in range(SWITCH_TRIES):
        fill_fitted(conn, started)
        try:
            return store.model_switches.switch(conn, started.from_model, started.target.model_id, started.migration_id)
        except store.model_switches.SwitchRefusedError as exc:
            last = exc
            if store.model_switches.index_model_id(conn) != started.from_model:
                raise MigrationError(str(exc)) from exc
    raise MigrationError(f"syncs kept publishing new chunks; nothing was switched ({last}): run it again")


@dataclass
class Started:
    """A migration under way: its row, the model it replaces and the one it goes to."""

    migration_id: int
    kind: str  # migrate, rollback
    from_model: int
    target: Target
    config: Config
    _live: Embedder | None = field(default=None, repr=False)

    def live_embedder(self, conn: psycopg.Connection) -> Embedder:
        """The index's model now (loaded on first use: only a re-chunking needs it)."""
        if self._live is None:
            self._live = _embedder(conn, self.config, self.from_model)
        return self._live


def start(conn: psycopg.Connection, config: Config, to: str, backend: str | None = None) -> Started:
    """Resolve and record the new model; begin (or continue) the migration to it."""
    from_model = live_model(conn)
    target = resolve_target(conn, config, to, backend)
    return Started(begin(conn, from_model, target.model_id, "migrate"), "migrate", from_model, target, config)


def start_rollback(conn: psycopg.Connection, config: Config) -> Started:
    """Begin switching back to the model the newest switch replaced."""
    current = live_model(conn)
    previous = store.model_switches.previous_model(conn)
    if previous is None:
        raise UsageError("the index's model was never switched: there is nothing to roll back")
    return Started(begin(conn, current, previous, "rollback"), "rollback", current,
                   target_for(conn, config, previous), config)


def resume(conn: psycopg.Connection, config: Config, migration_id: int) -> Started:
    """A started migration again, in another process (the Dagster job's later steps)."""
    found = store.model_switches.migration(conn, migration_id)
    if found is None:
        raise MigrationError(f"no model migration {migration_id}")
    return Started(migration_id, found["kind"], found["from_model"], target_for(conn, config, found["to_model"]),
                   config)


def target_for(conn: psycopg.Connection, config: Config, model_id: int) -> Target:
    source = store.model_switches.model_source(conn, model_id) or {}
    return Target(model_id, _embedder(conn, config, model_id), source.get("model"),
                  source.get("backend", config.embedding.backend))


def judge(conn: psycopg.Connection, config: Config, started: Started, *, no_worse: bool = False,
          progress: Progress = _no_progress) -> gate.GateReport:
    """Both models against the evaluation set, kept on the migration. A rollback is not judged:
    the model it returns to was the index's and passed its gates then."""
    if started.kind == "rollback":
        found = gate.GateReport(live={"model_id": started.from_model}, new={"model_id": started.target.model_id},
                                passed=True, reason="rollback: the previous model is not judged again")
    else:
        found = gate.judge(conn, config, (started.from_model, _embedder(conn, config, started.from_model)),
                           (started.target.model_id, started.target.embedder), no_worse=no_worse, progress=progress)
    store.model_switches.update_migration(conn, started.migration_id, gate=found.to_dict())
    if not found.passed:
        store.model_switches.update_migration(conn, started.migration_id, status="gate_failed", error=found.reason)
    return found


def finish(conn: psycopg.Connection, started: Started, verdict: gate.GateReport, filled: dict[str, Any], *,
           progress: Progress = _no_progress, wait_seconds: float = SYNC_WAIT_SECONDS) -> Outcome:
    """Switch when the gate passed; the outcome either way."""
    outcome = Outcome(started.kind, started.migration_id, started.from_model, started.target.model_id, "gate_failed",
                      filled, verdict.to_dict())
    if verdict.passed:
        found = switch(conn, started, progress, wait_seconds)
        outcome.switch, outcome.status = _jsonable(found), "switched"
    return outcome


def migrate(conn: psycopg.Connection, config: Config, to: str | None, backend: str | None = None, *,
            no_worse: bool = False, rollback: bool = False, progress: Progress = _no_progress,
            wait_seconds: float = SYNC_WAIT_SECONDS, batch: int = fill.BATCH) -> Outcome:
    """The whole migration (or rollback): start, fill and index, judge both models, switch if
    the gate passes."""
    if rollback:
        started = start_rollback(conn, config)
    elif not to:
        raise UsageError("--to MODEL names the model to migrate to (a folder or a cached name), or use --rollback")
    else:
        started = start(conn, config, to, backend)
    filled = embed_all(conn, started, progress, batch=batch).to_dict()
    verdict = judge(conn, config, started, no_worse=no_worse, progress=progress)
    return finish(conn, started, verdict, filled, progress=progress, wait_seconds=wait_seconds)


def prune(conn: psycopg.Connection, model_id: int | None = None) -> dict[int, int]:
    """Delete the vectors of retired models from model_vectors (all, or `model_id`): never the
    index's model, nor a running migration's. Returns rows deleted per model."""
    keep = {store.model_switches.index_model_id(conn)}
    running = store.model_switches.running_migration(conn)
    if running is not None:
        keep.add(running["to_model"])
    if model_id is not None:
        if store.models.model_by_id(conn, model_id) is None:
            raise UsageError(f"--model {model_id}: no such model (model ids are in `migrate-model --status`)")
        if model_id in keep:
            why = "the index's model" if model_id == store.model_switches.index_model_id(conn) else "a running migration's model"
            raise UsageError(f"model {model_id} is {why}: its vectors are in use and cannot be pruned")
        models = [model_id]
    else:
        models = [m for m in store.model_vectors.models_with_vectors(conn) if m not in keep]
    return {m: store.model_vectors.prune(conn, m) for m in models}


def _embedder(conn: psycopg.Connection, config: Config, model_id: int) -> Embedder:
    recorded = store.models.model_by_id(conn, model_id) or {"id": model_id}
    found = embedder_for_model(conn, recorded, embedder_for(config.embedding))
    if found is None:
        raise MigrationError(f"model {model_id} ({recorded.get('name')}, {recorded.get('numerics')}) cannot be loaded "
                             "here: configure it (embedding.model, embedding.backend)")
    return found


def _jsonable(found: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in found.items()}
