"""The database roles of migration 006 (writer, reader, compliance): which one a connection acts
as, and their login passwords, which come from the environment and never from the repository."""

from __future__ import annotations

import os
from collections.abc import Mapping

import psycopg
from psycopg import sql

WRITER, READER, COMPLIANCE = "rag_writer", "rag_reader", "rag_compliance"
PASSWORD_ENV = {WRITER: "RAG_WRITER_PASSWORD", READER: "RAG_READER_PASSWORD", COMPLIANCE: "RAG_COMPLIANCE_PASSWORD"}


def assume(conn: psycopg.Connection, role: str) -> bool:
    """Act as `role` for the rest of the session, so its grants and row-level security apply.

    A login that already is the role, or that may not become it (a deployment that connects with
    its own, narrower role), is left as it is. Returns whether the role is now in effect."""
    current, allowed = conn.execute(
        "SELECT current_user, pg_has_role(session_user, %s, 'MEMBER')", (role,)
    ).fetchone()
    if current == role:
        return True
    if not allowed:
        return False
    conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
    return True


def apply_passwords(conn: psycopg.Connection, env: Mapping[str, str] | None = None) -> list[str]:
    """Let each role whose password variable is set log in with that password. Returns the roles
    changed. The password travels as a SCRAM verifier computed here, never in clear text (the
    server's statement log would otherwise keep it). Commits."""
    env = os.environ if env is None else env
    changed = []
    for role, variable in PASSWORD_ENV.items():
        password = env.get(variable)
        if not password:
            continue
        verifier = conn.pgconn.encrypt_password(password.encode(), role.encode(), b"scram-sha-256")
        conn.execute(sql.SQL("ALTER ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(role), sql.Literal(verifier.decode())))
        changed.append(role)
    return changed
