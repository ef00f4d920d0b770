"""The screen's pages. Each request borrows a pooled connection in a worker thread; every page
but the sign-in needs a signed-in reviewer, and every answer, document and version is shown only
when the reviewer's groups may read it (404 otherwise, the same as for one that does not exist)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlencode

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from rag_pipeline import store
from rag_pipeline.errors import UsageError
from rag_pipeline.review import decide, queue, record, reviewers
from rag_pipeline.review.errors import NotFoundError, SignInError
from rag_pipeline.review.reviewers import Reviewer
from rag_pipeline.web.security import check_csrf, csrf_token, signed_in_name

T = TypeVar("T")
FILTERS = ("status", "source", "document", "since", "until")


async def _db(request: Request, work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`work(conn, ...)` in a worker thread; a missing or unreadable object is 404, bad input 400."""
    def run() -> T:
        with request.app.state.pool.connection() as conn:
            return work(conn, *args, **kwargs)

    try:
        return await run_in_threadpool(run)
    except NotFoundError as exc:
        raise HTTPException(404, str(exc)) from exc
    except SignInError:
        raise
    except UsageError as exc:
        raise HTTPException(400, str(exc)) from exc


def _page(request: Request, template: str, reviewer: Reviewer | None, status: int = 200, **context: Any) -> HTMLResponse:
    body = request.app.state.env.get_template(template).render(
        reviewer=reviewer, csrf=csrf_token(request), proxy=bool(request.app.state.proxy_header), **context)
    return HTMLResponse(body, status_code=status)


class _SignIn(Exception):
    pass


async def _reviewer(request: Request) -> Reviewer:
    """The signed-in reviewer; redirect to the sign-in page (or 403 behind a proxy) if none."""
    name = signed_in_name(request, request.app.state.proxy_header)
    if name is not None:
        try:
            return await _db(request, reviewers.named, name)
        except SignInError:
            if request.app.state.proxy_header:
                raise HTTPException(403, f"{name[:60]!r} is not a reviewer: ask for `rag-pipeline review add-reviewer`") from None
            request.session.pop("reviewer", None)
    if request.app.state.proxy_header:
        raise HTTPException(403, "the reverse proxy named no user")
    raise _SignIn


def _to_sign_in(request: Request) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse("/login?" + urlencode({"next": target}), status_code=303)


async def queue_page(request: Request) -> Response:
    try:
        reviewer = await _reviewer(request)
    except _SignIn:
        return _to_sign_in(request)
    given = {k: request.query_params.get(k, "") for k in FILTERS}
    try:
        wanted = queue.queue_filter(**given, cursor=request.query_params.get("cursor"),
                                    limit=request.query_params.get("limit"), groups=reviewer.groups)
    except UsageError as exc:
        return _page(request, "queue.html", reviewer, 400, rows=[], given=given, next_url=None, problem=str(exc),
                     statuses=store.reviews.STATUS_FILTERS, decided=None)
    found = await _db(request, queue.page, wanted)
    next_url = None
    if found.next_cursor:
        next_url = "/?" + urlencode({**{k: v for k, v in given.items() if v}, "cursor": found.next_cursor})
    return _page(request, "queue.html", reviewer, rows=found.rows, given=given, next_url=next_url, problem=None,
                 statuses=store.reviews.STATUS_FILTERS, decided=request.query_params.get("decided"))


def _viewed(conn: Any, answer_id: int, reviewer: Reviewer) -> record.Review:
    shown = record.load(conn, answer_id, reviewer.groups)
    store.reviews.record_view(conn, reviewer.name, answer_id)
    return shown


async def answer_page(request: Request) -> Response:
    try:
        reviewer = await _reviewer(request)
    except _SignIn:
        return _to_sign_in(request)
    shown = await _db(request, _viewed, request.path_params["answer_id"], reviewer)
    return _page(request, "answer.html", reviewer, review=shown, draft_text=decide.draft_text(shown))


async def citation_passage(request: Request) -> Response:
    """The passage a citation names, its quoted span marked: the HTMX partial of the answer page."""
    try:
        reviewer = await _reviewer(request)
    except _SignIn:
        return _to_sign_in(request)
    shown = await _db(request, record.load, request.path_params["answer_id"], reviewer.groups)
    claim_no, citation_no = request.path_params["claim"], request.path_params["citation"]
    if not 1 <= claim_no <= len(shown.claims) or not 1 <= citation_no <= len(shown.claims[claim_no - 1]["citations"]):
        raise HTTPException(404, "no such citation")
    citation = shown.claims[claim_no - 1]["citations"][citation_no - 1]
    passage = shown.passage(citation["chunk_id"])
    span = None if passage is None else record.quoted_span(passage.text, citation.get("quote"))
    return _page(request, "passage.html", reviewer, citation=citation, passage=passage, span=span,
                 claim_no=claim_no, answer_id=shown.answer_id)


async def decide_form(request: Request) -> Response:
    try:
        reviewer = await _reviewer(request)
    except _SignIn:
        return _to_sign_in(request)
    form = await request.form()
    check_csrf(request, form)
    decision = str(form.get("decision", ""))
    correction = str(form.get("correction", "")).encode("utf-8") if decision == "correct" else None
    model = None
    if correction is not None:
        if request.app.state.embedder is None:
            if request.app.state.embedder_loader is None:
                raise HTTPException(400, "this server verifies no corrections (no model configured)")
            request.app.state.embedder = await run_in_threadpool(request.app.state.embedder_loader)
        model = request.app.state.embedder
    answer_id = request.path_params["answer_id"]
    await _db(request, decide.decide, answer_id, decision, reviewer=reviewer.name, groups=reviewer.groups,
              comment=str(form.get("comment", "")), correction=correction, embedder=model)
    return RedirectResponse(f"/?decided={answer_id}", status_code=303)


async def document_page(request: Request) -> Response:
    try:
        reviewer = await _reviewer(request)
    except _SignIn:
        return _to_sign_in(request)

    def load(conn: Any, document_id: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        found = store.reviews.document(conn, document_id)
        readable = [v for v in store.reviews.document_versions(conn, document_id)
                    if set(v["acl_groups"]) & set(reviewer.groups)] if found else []
        if not found or not readable:
            raise NotFoundError(f"no document {document_id} that your groups may read")
        return found, readable

    document, versions = await _db(request, load, request.path_params["document_id"])
    return _page(request, "document.html", reviewer, document=document, versions=versions)


async def version_page(request: Request) -> Response:
    try:
        reviewer = await _reviewer(request)
    except _SignIn:
        return _to_sign_in(request)

    def load(conn: Any, version_id: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        found = store.reviews.version(conn, version_id)
        if not found or not set(found["acl_groups"]) & set(reviewer.groups):
            raise NotFoundError(f"no version {version_id} that your groups may read")
        return found, store.history.version_chunks(conn, version_id)

    version, chunks = await _db(request, load, request.path_params["version_id"])
    return _page(request, "version.html", reviewer, version=version, chunks=chunks)


async def login_page(request: Request) -> Response:
    if request.app.state.proxy_header:
        return RedirectResponse("/", status_code=303)
    target = request.query_params.get("next", "/")
    target = target if target.startswith("/") and not target.startswith(("//", "/\\")) else "/"
    if request.method == "GET":
        return _page(request, "login.html", None, next=target, problem=None)
    form = await request.form()
    check_csrf(request, form)
    try:
        found = await _db(request, reviewers.sign_in, str(form.get("name", "")), str(form.get("password", "")))
    except SignInError as exc:
        return _page(request, "login.html", None, 401, next=target, problem=str(exc))
    request.session.clear()
    request.session["reviewer"] = found.name
    csrf_token(request)  # a new token with the new session
    return RedirectResponse(target, status_code=303)


async def logout(request: Request) -> Response:
    form = await request.form()
    check_csrf(request, form)
    request.session.clear()
    return RedirectResponse("/login", status_code=303)
