"""Which versions a query sees (live, as of a time, or a run's preview) and the filter every
branch of the search statement carries: the view's versions, the caller's groups, the model.
Fixed SQL fragments only; every value is a parameter."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg


@dataclass(frozen=True)
class View:
    """Which versions a query sees: the live index, the index as of a time, or the index as it
    would look once `preview_run` publishes (what the gate evaluates)."""

    as_of: datetime | None = None
    preview_run: str | None = None
    # the model whose vectors to search instead of the view's own (the gate of a model migration
    # judges its shadow model; explain replays a logged search with the model it ran on)
    model_id: int | None = None

    @property
    def live(self) -> bool:
        """The live index (whatever the model): live statistics and plans apply."""
        return self.as_of is None and self.preview_run is None


_VISIBLE_LIVE = "v.status = 'live'"
VISIBLE_AS_OF = (
    "v.kind = 'content' AND v.status IN ('live', 'superseded')"
    " AND v.valid_from <= %(as_of)s AND (v.valid_to IS NULL OR %(as_of)s < v.valid_to)"
)


_VISIBLE_PREVIEW = (
    "((v.status = 'live' AND NOT EXISTS (SELECT 1 FROM document_versions s"
    "   WHERE s.document_id = v.document_id AND s.run_id = %(preview_run)s AND s.status = 'staged'))"
    " OR (v.status = 'staged' AND v.kind = 'content' AND v.run_id = %(preview_run)s))"
)


def _visibility(view: View) -> str:
    if view.preview_run is not None:
        return _VISIBLE_PREVIEW
    if view.as_of is not None:
        return VISIBLE_AS_OF
    return _VISIBLE_LIVE


def _model_sql(view: View) -> str:
    """The model of the index a view shows. The live index's is rag_live_model() (migrations 015
    and 023: index metadata any role may read, found without the caller's groups): the newest
    model switch, else the newest live content version's. As of a time: the newest switch at or
    before it, else the newest visible content version's (a sync refuses to mix models, so any
    visible version would do). A run's preview: the live index's (publish refuses a run whose
    model is not the index's). A view naming its model searches that one."""
    if view.model_id is not None:
        return "SELECT %(view_model)s::integer"
    if view.live:
        return "SELECT rag_live_model()"
    newest_visible = (f"SELECT v.model_id FROM document_versions v WHERE {_visibility(view)} AND v.kind = 'content'"  # noqa: S608 -- fixed fragment
                      " AND v.model_id IS NOT NULL ORDER BY v.id DESC LIMIT 1")
    if view.preview_run is not None:
        return f"SELECT coalesce(rag_live_model(), ({newest_visible}))"
    return f"SELECT coalesce(rag_switched_model(%(as_of)s), ({newest_visible}))"


# The vector a chunk has for the searched model (%(model_id)s): its own when it was embedded with
# that model, else its row in model_vectors (migration 023: a model migration's vectors).
VECTOR = ("coalesce(CASE WHEN c.model_id = %(model_id)s THEN c.embedding END,"
          " (SELECT mv.embedding FROM model_vectors mv WHERE mv.chunk_id = c.id AND mv.model_id = %(model_id)s))")
# The chunks that have one.
HAS_VECTOR = ("(c.model_id = %(model_id)s OR EXISTS (SELECT 1 FROM model_vectors mv"
              " WHERE mv.chunk_id = c.id AND mv.model_id = %(model_id)s))")
# Both for a model none of whose vectors is in model_vectors (rag_model_migrated false: every
# index that never ran a model migration). Not only shorter to run: each reference to
# model_vectors brings its row-level security, and a chunk lookup's, into a reader's statement,
# which is planned at every search (plan_cache_mode = force_custom_plan).
NATIVE_VECTOR = "CASE WHEN c.model_id = %(model_id)s THEN c.embedding END"
HAS_NATIVE_VECTOR = "c.model_id = %(model_id)s"


def vector_sql(migrated: bool = True) -> str:
    """The chunk's vector for the searched model; `migrated` False: the model has no vector in
    model_vectors (what search_prepare read in the same transaction), True: it may have."""
    return VECTOR if migrated else NATIVE_VECTOR


def _where(view: View, migrated: bool = True) -> str:
    """The filter of every branch: the view's versions, the caller's groups, the chunks that have
    a vector of the model (`migrated`: as vector_sql's)."""
    return f"{_version_filter(view)} AND {HAS_VECTOR if migrated else HAS_NATIVE_VECTOR}"


def _version_filter(view: View) -> str:
    """The versions a caller may see in the view (on `v`)."""
    return f"{_visibility(view)} AND v.acl_groups && %(groups)s::text[]"


def _filter_params(groups: Sequence[str], model_id: int, view: View) -> dict[str, Any]:
    return {"groups": list(groups), "model_id": model_id, "as_of": view.as_of, "preview_run": view.preview_run,
            "view_model": view.model_id}


def index_model_id(conn: psycopg.Connection, view: View = View()) -> int | None:
    """The model of the index a query sees: queries must embed with it."""
    row = conn.execute(
        _model_sql(view),
        {"as_of": view.as_of, "preview_run": view.preview_run},
    ).fetchone()
    return row[0] if row else None
