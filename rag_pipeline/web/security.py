"""Who is asking, and whether a form really comes from the screen.

Sign-in: a reviewer's name and password (checked against the scrypt hash in `reviewers`) put
their name into a session cookie signed with the server's secret (Starlette's SessionMiddleware,
itsdangerous; HttpOnly, SameSite=Strict). Or, when the server is started with a proxy header
(`--proxy-user-header X-Forwarded-User`), the reverse proxy authenticates and names the user in
that header, and the screen trusts it as the only sign-in: run it so only the proxy can reach it.
Either way the reviewer must be in `reviewers`; their groups are read on every request, so a
change applies at once.

CSRF: each session holds a random token; every form carries it in a hidden field (HTMX requests
in the X-CSRF-Token header) and every POST without the session's token is refused with 403."""

from __future__ import annotations

import hmac
import secrets

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request

CSRF_FIELD, CSRF_HEADER = "csrf", "x-csrf-token"


def csrf_token(request: Request) -> str:
    token = request.session.get("csrf")
    if not isinstance(token, str) or len(token) < 32:
        token = secrets.token_urlsafe(32)
        request.session["csrf"] = token
    return token


def check_csrf(request: Request, form: FormData) -> None:
    """403 unless the form (or the HTMX header) carries this session's token."""
    expected = request.session.get("csrf")
    given = form.get(CSRF_FIELD) or request.headers.get(CSRF_HEADER) or ""
    if not isinstance(expected, str) or not isinstance(given, str) or not hmac.compare_digest(
            expected.encode(), given.encode()):
        raise HTTPException(403, "the form's CSRF token is missing or wrong: reload the page and try again")


def signed_in_name(request: Request, proxy_header: str | None) -> str | None:
    """The reviewer's name: the proxy's header when configured, else the session's."""
    if proxy_header:
        value = request.headers.get(proxy_header, "").strip()
        return value or None
    name = request.session.get("reviewer")
    return name if isinstance(name, str) and name else None
