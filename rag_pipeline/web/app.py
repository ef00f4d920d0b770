"""The review screen's application: routes, sessions, security headers, error pages."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from rag_pipeline.embedding import Embedder
from rag_pipeline.web import pages
from rag_pipeline.web.pool import Pool
from rag_pipeline.web.render import environment

STATIC = Path(__file__).resolve().parent / "static"
# htmx's indicator styles are switched off (meta htmx-config), so no inline style is needed
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", [])
                           if k.decode("latin-1").lower() not in SECURITY_HEADERS]
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, sending if scope["type"] == "http" else send)


def _closing(pool: Pool) -> Callable[[Starlette], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        yield
        pool.close()

    return lifespan


def create_app(url: str, *, proxy_header: str | None = None, secret: str | None = None,
               embedder: Callable[[], Embedder] | None = None, https_only: bool = False) -> Starlette:
    """The screen over the migrated index at `url`. `secret` signs session cookies (a random one
    per start when None: signing in again after a restart); `embedder` loads the model that
    verifies corrections (on the first correction)."""
    env = environment()
    pool = Pool(url)

    async def error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        detail = exc.detail if isinstance(exc, HTTPException) else "the screen failed; see the server's log"
        body = env.get_template("error.html").render(status=status, detail=detail, reviewer=None, csrf="")
        return HTMLResponse(body, status_code=status)

    app = Starlette(
        routes=[
            Route("/", pages.queue_page),
            Route("/login", pages.login_page, methods=["GET", "POST"]),
            Route("/logout", pages.logout, methods=["POST"]),
            Route("/answers/{answer_id:int}", pages.answer_page),
            Route("/answers/{answer_id:int}/citations/{claim:int}/{citation:int}", pages.citation_passage),
            Route("/answers/{answer_id:int}/decide", pages.decide_form, methods=["POST"]),
            Route("/documents/{document_id:int}", pages.document_page),
            Route("/versions/{version_id:int}", pages.version_page),
            Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
        ],
        middleware=[
            Middleware(SecurityHeaders),
            Middleware(SessionMiddleware, secret_key=secret or secrets.token_urlsafe(32), session_cookie="rag_review",
                       same_site="strict", https_only=https_only, max_age=12 * 3600),
        ],
        exception_handlers={HTTPException: error, Exception: error},
        lifespan=_closing(pool),
        max_body_size=2 * 1024 * 1024,  # a correction is at most 1 MiB (answers.draft)
    )
    app.state.env, app.state.pool, app.state.proxy_header = env, pool, proxy_header
    app.state.embedder_loader, app.state.embedder = embedder, None
    return app
