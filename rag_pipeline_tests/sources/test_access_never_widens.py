"""An access file never widens access by accident (issue 22, item 1), in folders and in S3 alike:
a `files:` key that names no file, a file spelled like an access file but not one, and a group
name no caller could ever be in each stop the source's listing with the file (and key) named,
instead of falling back to the folder's wider groups."""

from __future__ import annotations

from pathlib import Path

import pytest
from s3_server import Bucket

from rag_pipeline.common.s3 import make_client
from rag_pipeline.sources.base import ListingError, SourceObject
from rag_pipeline.sources.filesystem import FilesystemSource
from rag_pipeline.sources.s3 import S3Source

FOLDER = "groups: [all-staff]\nfiles:\n"


def _write(root: Path, rel: str, text: str = "x") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _folder(root: Path) -> dict[str, SourceObject]:
    return {o.uri: o for o in FilesystemSource("s", root).list_objects() if isinstance(o, SourceObject)}


def _s3(bucket: Bucket, **kwargs) -> dict[str, SourceObject]:
    client, counter = make_client(endpoint_url=bucket.endpoint, max_attempts=2)
    source = S3Source("s3docs", client, bucket.name, "docs/", counter=counter, **kwargs)
    return {o.uri: o for o in source.list_objects() if isinstance(o, SourceObject)}


# (the key as written in the access file, the file's real name, what the message adds)
UNMATCHED = [
    ("Salaries.pdf", "salaries.pdf", "did you mean 'salaries.pdf'"),  # a case difference
    ('"salaries.pdf "', "salaries.pdf", "did you mean 'salaries.pdf'"),  # a trailing space
    ("salaries.pfd", "salaries.pdf", "did you mean 'salaries.pdf'"),  # a typo
    ('"*.pdf"', "salaries.pdf", "globs are not supported"),  # a glob
    ('"salaries.*"', "salaries.pdf", "globs are not supported"),
    ("salaries", "salaries.pdf", "salaries"),  # the extension left out
    ("old-salaries.pdf", "salaries.pdf", "old-salaries.pdf"),  # a file since deleted or renamed
    ("archive", "salaries.pdf", "archive"),  # a subfolder is not a file of the folder
]


@pytest.mark.parametrize("key, name, words", UNMATCHED)
def test_a_files_key_matching_no_file_stops_the_folder_listing_naming_file_and_key(
        tmp_path: Path, key: str, name: str, words: str) -> None:
    _write(tmp_path, "hr/_access.yaml", f"{FOLDER}  {key}: [hr]\n")
    _write(tmp_path, f"hr/{name}", "pay")
    _write(tmp_path, "hr/archive/old.md")
    with pytest.raises(ListingError) as info:
        _folder(tmp_path)
    message = str(info.value)
    assert "hr/_access.yaml" in message and "matches no file" in message
    assert repr(key.strip('"')) in message and words in message


def test_a_key_that_matches_still_applies_and_a_hidden_file_counts_as_present(tmp_path: Path) -> None:
    _write(tmp_path, "hr/_access.yaml", f"{FOLDER}  salaries.pdf: [hr]\n  .draft.md: [hr]\n")
    _write(tmp_path, "hr/salaries.pdf", "pay")
    _write(tmp_path, "hr/.draft.md", "never listed, but it is there: no typo")
    _write(tmp_path, "hr/leave.md")
    listing = _folder(tmp_path)
    assert listing["hr/salaries.pdf"].acl_groups == ("hr",)
    assert listing["hr/leave.md"].acl_groups == ("all-staff",)


def test_the_unmatched_key_is_never_a_silent_fallback_even_with_default_groups(tmp_path: Path) -> None:
    _write(tmp_path, "_access.yaml", "files:\n  Board-Minutes.md: [board]\n")  # only overrides, at the root
    _write(tmp_path, "board-minutes.md", "secret")
    with pytest.raises(ListingError, match="Board-Minutes.md"):
        list(FilesystemSource("s", tmp_path, default_groups=("all-staff",)).list_objects())


LOOKALIKES = ["_access.yml", "_Access.yaml", "_ACCESS.YAML", "_access.yaml ", " _access.yaml", "access.yaml",
              "_acess.yaml", "_access.yaml~", "_access.json", "_access", "-access.yaml", "__access.yaml",
              "\uff3f\uff41\uff43\uff43\uff45\uff53\uff53.yaml", "_access\u200b.yaml", "_acc\u0435ss.yml"]


@pytest.mark.parametrize("name", LOOKALIKES)
def test_a_misspelt_access_file_is_refused_never_indexed_nor_ignored(tmp_path: Path, name: str) -> None:
    _write(tmp_path, "_access.yaml", "groups: [all-staff]\n")
    _write(tmp_path, f"hr/{name}", "groups: [hr]\n")  # its author meant: only hr
    _write(tmp_path, "hr/salaries.md", "pay")
    with pytest.raises(ListingError) as info:
        _folder(tmp_path)
    assert f"hr/{name}" in str(info.value) and "named like an access file" in str(info.value)


@pytest.mark.parametrize("name", ["access.md", "access.txt", "accessibility.md", "_assess.yaml", "process.yaml",
                                  "_access.yaml.bak", "Access", "._access.yaml"])
def test_ordinary_names_near_access_are_not_refused(tmp_path: Path, name: str) -> None:
    _write(tmp_path, "_access.yaml", "groups: [all-staff]\n")
    _write(tmp_path, name, "a document")
    listing = _folder(tmp_path)
    assert name.startswith(".") or listing[name].acl_groups == ("all-staff",)


def test_a_misspelt_access_file_that_is_a_symlink_or_a_folder_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _write(root, "_access.yaml", "groups: [all-staff]\n")
    _write(root, ".config/hr.yaml", "groups: [hr]\n")
    (root / "_Access.yaml").symlink_to(root / ".config" / "hr.yaml")
    with pytest.raises(ListingError, match="_Access.yaml"):
        _folder(root)
    (root / "_Access.yaml").unlink()
    (root / "team" / "_access.yaml").mkdir(parents=True)
    with pytest.raises(ListingError, match="is a folder"):
        _folder(root)


BAD_GROUPS = [
    ('["hr\\u0000"]', "control character"),
    ('["hr\\n"]', None),  # stripped: a trailing newline is no group name of its own
    ('["h\\u0007r"]', "control character"),
    ('["hr\\u200b"]', "invisible format character"),
    ('["\\u202ehr"]', "invisible format character"),
    ('["hr,finance"]', "','"),
    ('["' + "g" * 201 + '"]', "the limit is 200"),
    ('["\\ud800"]', "not valid YAML"),  # the YAML reader refuses a lone surrogate escape itself
]


@pytest.mark.parametrize("groups, words", BAD_GROUPS)
def test_group_names_are_held_to_the_search_rule_where_they_are_read(tmp_path: Path, groups: str, words: str | None) -> None:
    _write(tmp_path, "team/_access.yaml", f"groups: {groups}\n")
    _write(tmp_path, "team/doc.md")
    if words is None:
        assert _folder(tmp_path)["team/doc.md"].acl_groups == ("hr",)
        return
    with pytest.raises(ListingError) as info:
        _folder(tmp_path)
    assert "team/_access.yaml" in str(info.value) and words in str(info.value)
    assert "YAML" in words or str(info.value).isprintable()  # the bad name is shown escaped


def test_a_bad_group_in_a_files_override_names_the_key(tmp_path: Path) -> None:
    _write(tmp_path, "_access.yaml", 'groups: [all-staff]\nfiles:\n  a.md: ["hr\\tpayroll"]\n')
    _write(tmp_path, "a.md")
    with pytest.raises(ListingError, match=r"_access\.yaml: files\.a\.md.*control character"):
        _folder(tmp_path)


def test_the_same_group_rule_holds_for_configured_default_groups(tmp_path: Path) -> None:
    from rag_pipeline.config import ConfigError, load_config

    path = tmp_path / "rag_pipeline.yaml"
    path.write_text('database_url: postgresql:///x\nsources:\n  - {name: d, path: ., default_groups: ["hr\\u200b"]}\n')
    with pytest.raises(ConfigError, match="default_groups.*invisible format character"):
        load_config(path)


# ------------------------------------------------------------------ S3: the same rules


@pytest.mark.parametrize("key, name, words", [u for u in UNMATCHED if u[0] != "archive"])
def test_s3_a_files_key_matching_no_object_stops_the_listing(bucket: Bucket, key: str, name: str, words: str) -> None:
    bucket.put("docs/hr/_access.yaml", f"{FOLDER}  {key}: [hr]\n")
    bucket.put(f"docs/hr/{name}", "pay")
    bucket.put("docs/hr/archive/old.md", "x")
    with pytest.raises(ListingError) as info:
        _s3(bucket)
    message = str(info.value)
    assert "docs/hr/_access.yaml" in message and repr(key.strip('"')) in message and words in message


def test_s3_an_override_for_an_object_in_a_subfolder_does_not_match(bucket: Bucket) -> None:
    bucket.put("docs/_access.yaml", f"{FOLDER}  salaries.pdf: [hr]\n")
    bucket.put("docs/hr/salaries.pdf", "pay")  # not in the access file's folder
    with pytest.raises(ListingError, match="salaries.pdf"):
        _s3(bucket)


@pytest.mark.parametrize("name", ["_access.yml", "_Access.yaml", "_ACCESS.YAML", "_access.yaml ", "access.yaml"])
def test_s3_a_misspelt_access_object_is_refused(bucket: Bucket, name: str) -> None:
    bucket.put("docs/_access.yaml", "groups: [all-staff]\n")
    bucket.put(f"docs/hr/{name}", "groups: [hr]\n")
    bucket.put("docs/hr/salaries.md", "pay")
    with pytest.raises(ListingError, match="named like an access file"):
        _s3(bucket)


@pytest.mark.parametrize("where", ["tags", "metadata"])
def test_s3_object_groups_are_held_to_the_search_rule(bucket: Bucket, where: str) -> None:
    bad = "g" * 201 if where == "tags" else "hr\x7f"  # S3 refuses control characters in tags itself
    if where == "tags":
        bucket.put("docs/a.md", "x", tags={"rag-groups": f"sales {bad}"})
    else:
        bucket.put("docs/a.md", "x", metadata={"rag-groups": bad})
    with pytest.raises(ListingError) as info:
        _s3(bucket)
    assert "docs/a.md" in str(info.value) and "rag-groups" in str(info.value)
