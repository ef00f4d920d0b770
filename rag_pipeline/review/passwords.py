"""Reviewers' passwords, stored as scrypt hashes (the standard library's hashlib.scrypt: memory
hard, no new dependency) with a random salt and the cost parameters in the stored string, so the
cost can be raised later without invalidating old hashes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from rag_pipeline.errors import UsageError

N, R, P = 2**14, 8, 1  # ~16 MiB and ~50 ms a check: slow for a guesser, quick for a sign-in
MIN_CHARS, MAX_CHARS = 8, 1024


def hash_password(password: str) -> str:
    """`scrypt$N$r$p$salt$hash` (salt and hash base64); UsageError for a password that is too
    short or too long (a megabyte password would cost every check)."""
    if len(password) < MIN_CHARS:
        raise UsageError(f"the password is {len(password)} characters long; use at least {MIN_CHARS}")
    if len(password) > MAX_CHARS:
        raise UsageError(f"the password is over {MAX_CHARS} characters long")
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=N, r=R, p=P, dklen=32)
    return "$".join(("scrypt", str(N), str(R), str(P), _b64(salt), _b64(digest)))


def check_password(password: str, stored: str | None) -> bool:
    """Whether `password` matches `stored`; False for a reviewer without a password, a malformed
    hash or an over-long password (never an exception: a sign-in just fails)."""
    if not stored or len(password) > MAX_CHARS:
        return False
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        expected = base64.b64decode(digest)
        found = hashlib.scrypt(password.encode("utf-8"), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p),
                               dklen=len(expected), maxmem=256 * 1024 * 1024)
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(found, expected)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
