"""Reviewers: who may sign in, and the access groups that decide which answers they see."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

from rag_pipeline import store
from rag_pipeline.common.groups import group_problem
from rag_pipeline.errors import UsageError
from rag_pipeline.review.errors import SignInError
from rag_pipeline.review.passwords import check_password, hash_password

MAX_NAME_CHARS = 200


@dataclass(frozen=True)
class Reviewer:
    name: str
    groups: tuple[str, ...]


def add_reviewer(conn: psycopg.Connection, name: str, groups: list[str], password: str | None) -> bool:
    """Add a reviewer or replace their password and groups (None: signs in through the reverse
    proxy only); True when added."""
    name = _name(name)
    for group in groups:
        problem = group_problem(group)
        if problem:
            raise UsageError(f"--groups: {problem}")
    if not groups:
        raise UsageError("a reviewer needs at least one group: they see the answers those groups may read")
    hashed = None if password is None else hash_password(password)
    return store.reviews.save_reviewer(conn, name, hashed, sorted(set(groups)))


def sign_in(conn: psycopg.Connection, name: str, password: str) -> Reviewer:
    """The reviewer when the password matches; SignInError (one message for an unknown name and a
    wrong password) otherwise."""
    found = store.reviews.reviewer(conn, name[:MAX_NAME_CHARS]) if name else None
    if found is None or not check_password(password, found["password_hash"]):
        raise SignInError("unknown reviewer or wrong password")
    return Reviewer(found["name"], tuple(found["groups"]))


def named(conn: psycopg.Connection, name: str) -> Reviewer:
    """A registered reviewer by name (the reverse proxy's user, `--reviewer`); SignInError if none."""
    found = store.reviews.reviewer(conn, name[:MAX_NAME_CHARS]) if name else None
    if found is None:
        raise SignInError(f"no reviewer {name[:60]!r}: add them with `rag-pipeline review add-reviewer`")
    return Reviewer(found["name"], tuple(found["groups"]))


def _name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > MAX_NAME_CHARS or not name.isprintable():
        raise UsageError(f"a reviewer's name is 1 to {MAX_NAME_CHARS} visible characters")
    return name
