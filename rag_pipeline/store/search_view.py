"""Which versions a query sees (live, as of a time, or a run's preview) and the filter every
branch of the search statement carries: the view's versions, the caller's groups, the model.
Fixed SQL fragments only; every value is a parameter."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class View:
    """Which versions a query sees: the live index, the index as of a time, or the index as it
    would look once `preview_run` publishes (what the gate evaluates)."""

    as_of: datetime | None = None
    preview_run: str | None = None


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
    """The model of the index a view shows: the newest visible content version's (a sync refuses
    to mix models, so any visible version would do). The live index's is rag_live_model()
    (migration 015: index metadata any role may read, found without the caller's groups)."""
    if view == View():
        return "SELECT rag_live_model()"
    return (f"SELECT v.model_id FROM document_versions v WHERE {_visibility(view)} AND v.kind = 'content'"  # noqa: S608 -- fixed fragment
            " AND v.model_id IS NOT NULL ORDER BY v.id DESC LIMIT 1")


def _where(view: View) -> str:
    """The filter of every branch: the view's versions, the caller's groups, the model."""
    return f"{_version_filter(view)} AND c.model_id = %(model_id)s"


def _version_filter(view: View) -> str:
    """The versions a caller may see in the view (on `v`)."""
    return f"{_visibility(view)} AND v.acl_groups && %(groups)s::text[]"


def _filter_params(groups: Sequence[str], model_id: int, view: View) -> dict[str, Any]:
    return {"groups": list(groups), "model_id": model_id, "as_of": view.as_of, "preview_run": view.preview_run}
