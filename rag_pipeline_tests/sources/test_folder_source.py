"""Folder source: recursive listing, content checksums, `_access.yaml` ACLs with default deny."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from rag_pipeline.sources.base import ListingError, SourceObject
from rag_pipeline.sources.filesystem import FilesystemSource


def _write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _listing(root: Path, deny: tuple[str, ...] = (), default_groups: tuple[str, ...] = ()) -> dict[str, SourceObject]:
    objects = list(FilesystemSource("s", root, deny, default_groups).list_objects())
    return {o.uri: o for o in objects if isinstance(o, SourceObject)}


def test_recursive_listing_with_sha256_checksums(tmp_path: Path) -> None:
    _write(tmp_path, "a.md", "alpha")
    _write(tmp_path, "deep/er/b.txt", "beta")
    listing = _listing(tmp_path)
    assert set(listing) == {"a.md", "deep/er/b.txt"}
    assert listing["deep/er/b.txt"].checksum == "sha256:" + hashlib.sha256(b"beta").hexdigest()
    assert listing["a.md"].size == 5


def test_no_access_file_means_default_deny(tmp_path: Path) -> None:
    _write(tmp_path, "open.md", "x")
    assert _listing(tmp_path)["open.md"].acl_groups == ()


def test_default_groups_act_as_a_root_access_file_that_real_access_files_replace(tmp_path: Path) -> None:
    _write(tmp_path, "open.md", "x")
    _write(tmp_path, "hr/pay.md", "x")
    _write(tmp_path, "hr/_access.yaml", "groups: [hr]\n")
    listing = _listing(tmp_path, default_groups=("all-staff",))
    assert listing["open.md"].acl_groups == ("all-staff",) and listing["hr/pay.md"].acl_groups == ("hr",)
    _write(tmp_path, "_access.yaml", "files:\n  open.md: [board]\n")  # overrides only: defaults still hold
    _write(tmp_path, "other.md", "x")
    listing = _listing(tmp_path, default_groups=("all-staff",))
    assert listing["open.md"].acl_groups == ("board",) and listing["other.md"].acl_groups == ("all-staff",)
    _write(tmp_path, "_access.yaml", "groups: [sales]\n")  # a real root rule replaces the defaults
    assert _listing(tmp_path, default_groups=("all-staff",))["other.md"].acl_groups == ("sales",)


def test_access_file_applies_to_subtree_until_replaced_with_file_overrides(tmp_path: Path) -> None:
    _write(tmp_path, "_access.yaml", "groups: [all-staff]\n")
    _write(tmp_path, "policy.md", "x")
    _write(tmp_path, "hr/_access.yaml", "groups: [all-staff]\nfiles:\n  salaries.pdf: [hr]\n")
    _write(tmp_path, "hr/salaries.pdf", "x")
    _write(tmp_path, "hr/leave.md", "x")
    _write(tmp_path, "hr/archive/old.md", "x")
    _write(tmp_path, "sales/_access.yaml", "groups: [sales, management]\n")
    _write(tmp_path, "sales/deals/q1.md", "x")
    listing = _listing(tmp_path)
    assert listing["policy.md"].acl_groups == ("all-staff",)
    assert listing["hr/salaries.pdf"].acl_groups == ("hr",)
    assert listing["hr/leave.md"].acl_groups == ("all-staff",)
    assert listing["hr/archive/old.md"].acl_groups == ("all-staff",)  # inherited two levels down
    assert listing["sales/deals/q1.md"].acl_groups == ("management", "sales")  # replaced, not merged
    assert "_access.yaml" not in listing and "hr/_access.yaml" not in listing  # never indexed


def test_access_file_with_only_file_overrides_inherits_folder_groups(tmp_path: Path) -> None:
    _write(tmp_path, "_access.yaml", "groups: [all-staff]\n")
    _write(tmp_path, "legal/_access.yaml", "files:\n  nda.md: [legal]\n")
    _write(tmp_path, "legal/nda.md", "x")
    _write(tmp_path, "legal/faq.md", "x")
    listing = _listing(tmp_path)
    assert listing["legal/nda.md"].acl_groups == ("legal",)
    assert listing["legal/faq.md"].acl_groups == ("all-staff",)


@pytest.mark.parametrize(
    "content, words",
    [
        ("groups: all-staff\n", "list of group names"),
        ("groups: [ok]\nfiles: [a, b]\n", "'files' must map"),
        ("groups: [ok\n", "not valid YAML"),
        ("grups: [typo]\n", "unknown keys"),
        ("files:\n  ../escape.md: [x]\n", "must be a file name"),
        ("- just\n- a list\n", "must be a mapping"),
        ("1: a\nb: c\n", "unknown keys"),  # keys of two types: once a TypeError from sorting them
        ("groups: [" + "9" * 5_000 + "]\n", "not valid YAML"),  # once a ValueError from int()
    ],
)
def test_broken_access_file_stops_the_listing_naming_the_file(tmp_path: Path, content: str, words: str) -> None:
    _write(tmp_path, "team/_access.yaml", content)
    _write(tmp_path, "team/doc.md", "x")
    with pytest.raises(ListingError) as info:
        _listing(tmp_path)
    assert words in str(info.value)
    assert "team/_access.yaml" in str(info.value)


def test_huge_access_file_is_refused(tmp_path: Path) -> None:
    _write(tmp_path, "_access.yaml", "groups: [a]\n# " + "x" * (2 * 1024 * 1024))
    with pytest.raises(ListingError, match="larger than 1 MiB"):
        _listing(tmp_path)


def test_missing_root_is_a_listing_error(tmp_path: Path) -> None:
    with pytest.raises(ListingError, match="does not exist"):
        _listing(tmp_path / "nope")


def test_hidden_files_symlinks_and_denied_patterns_are_not_listed(tmp_path: Path) -> None:
    _write(tmp_path, ".git/config", "x")
    _write(tmp_path, ".env", "SECRET=1")
    _write(tmp_path, "keys/server.key", "x")
    _write(tmp_path, "ok.md", "x")
    outside = _write(tmp_path.parent / "outside", "secret.md", "x")
    (tmp_path / "link.md").symlink_to(outside)
    listing = _listing(tmp_path, deny=("*.key",))
    assert set(listing) == {"ok.md"}


def test_hostile_file_names_are_listed_verbatim(tmp_path: Path) -> None:
    names = ["'; DROP TABLE documents;--.md", "naïve ünïcode ✓.md", "spaces and (parens).md"]
    for name in names:
        _write(tmp_path, name, "x")
    assert set(_listing(tmp_path)) == set(names)


def _all(root: Path) -> dict[str, object]:
    return {o.uri: o for o in FilesystemSource("s", root).list_objects()}


def test_a_symlinked_access_file_inside_the_root_is_read(tmp_path: Path) -> None:
    """Mounted ConfigMaps are symlinks: the folder must get the linked file's groups, not
    inherit the wider groups of its parent."""
    _write(tmp_path, "_access.yaml", "groups: [all-staff]\n")
    _write(tmp_path, ".config/hr-access.yaml", "groups: [hr]\n")
    _write(tmp_path, "hr/salaries.md", "pay")
    (tmp_path / "hr" / "_access.yaml").symlink_to(tmp_path / ".config" / "hr-access.yaml")
    assert _listing(tmp_path)["hr/salaries.md"].acl_groups == ("hr",)


@pytest.mark.parametrize("target", ["outside", "dangling"])
def test_a_symlinked_access_file_pointing_outside_or_nowhere_stops_the_listing(tmp_path: Path, target: str) -> None:
    root = tmp_path / "root"
    _write(root, "_access.yaml", "groups: [all-staff]\n")
    _write(root, "hr/salaries.md", "pay")
    outside = _write(tmp_path, "elsewhere.yaml", "groups: [everyone]\n")
    (root / "hr" / "_access.yaml").symlink_to(outside if target == "outside" else tmp_path / "missing.yaml")
    with pytest.raises(ListingError, match=r"hr/_access\.yaml"):
        list(FilesystemSource("s", root).list_objects())


def test_file_overrides_match_names_in_either_unicode_form(tmp_path: Path) -> None:
    import unicodedata

    nfc = "Gehälter-Übersicht.md"
    _write(tmp_path, "_access.yaml", f"groups: [all-staff]\nfiles:\n  {nfc}: [hr]\n")
    _write(tmp_path, unicodedata.normalize("NFD", nfc), "pay")  # as copied from macOS
    [uri] = [u for u in _listing(tmp_path) if u != "_access.yaml"]
    assert uri == unicodedata.normalize("NFD", nfc)  # the name on disk stays the document's URI
    assert _listing(tmp_path)[uri].acl_groups == ("hr",)


@pytest.mark.parametrize("files", ["  a.md: [hr]\n  a.md: [all-staff]\n",
                                   "  \u00e4.md: [hr]\n  a\u0308.md: [all-staff]\n"])
def test_duplicate_file_keys_in_an_access_file_are_an_error_naming_it(tmp_path: Path, files: str) -> None:
    _write(tmp_path, "_access.yaml", "groups: [all-staff]\nfiles:\n" + files)
    _write(tmp_path, "a.md", "x")
    with pytest.raises(ListingError, match=r"_access\.yaml.*(duplicate key|twice)"):
        list(FilesystemSource("s", tmp_path).list_objects())


def test_fifos_sockets_and_devices_are_skipped_with_a_reason_and_never_opened(tmp_path: Path) -> None:
    import os
    import socket

    _write(tmp_path, "_access.yaml", "groups: [all-staff]\n")
    _write(tmp_path, "real.md", "text")
    os.mkfifo(tmp_path / "pipe.md")  # opening it for reading would block forever
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "listen.sock"))
    try:
        listing = _all(tmp_path)  # returns at all: nothing waited on the FIFO
    finally:
        server.close()
    assert isinstance(listing["real.md"], SourceObject)
    assert "FIFO" in listing["pipe.md"].reason and "never opened" in listing["pipe.md"].reason
    assert "socket" in listing["listen.sock"].reason


def test_a_deny_pattern_holds_whatever_the_case_or_unicode_form_of_the_name(tmp_path: Path) -> None:
    """A deny list is a safety control: a Mac's decomposed folder name ("Entwu\u0308rfe") or an
    upper-case extension must not slip past a pattern typed composed and lower-case."""
    import unicodedata

    _write(tmp_path, "_access.yaml", "groups: [all-staff]\n")
    _write(tmp_path, unicodedata.normalize("NFD", "Entwürfe/plan.md"), "draft")
    _write(tmp_path, "keys/SERVER.KEY", "x")
    _write(tmp_path, "Private/notes.md", "x")
    _write(tmp_path, "ok.md", "x")
    listing = _listing(tmp_path, deny=("*.key", "private/**", "Entwürfe/*"))
    assert set(listing) == {"ok.md"}
    assert set(_listing(tmp_path)) == {"ok.md", "keys/SERVER.KEY", "Private/notes.md",
                                       unicodedata.normalize("NFD", "Entwürfe/plan.md")}
