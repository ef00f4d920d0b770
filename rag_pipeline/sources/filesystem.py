"""Local folder source: recursive listing with SHA-256 content checksums and folder ACLs."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from rag_pipeline.sources.access_files import (
    ACCESS_FILE,
    MAX_ACCESS_FILE_BYTES,
    AccessFileError,
    AccessResolver,
    AccessRule,
    check_overrides,
    is_lookalike,
    lookalike_error,
    parse_access_file,
    with_default_groups,
)
from rag_pipeline.sources.base import ListingError, SkippedObject, SourceObject, is_denied

HASH_CHUNK = 1024 * 1024


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(HASH_CHUNK):
            digest.update(block)
    return digest.hexdigest()


class FilesystemSource:
    """Lists a folder tree. Hidden files and folders (dot-names) and symlinks are skipped:
    a symlink could point outside the configured root. An `_access.yaml` symlink (a mounted
    ConfigMap) is read when its target is inside the root and stops the sync otherwise: an
    access file is never ignored. Only regular files are offered; a FIFO, socket or device
    is reported as skipped and never opened (opening a FIFO blocks forever).

    `default_groups` (configured) give groups to files no access file gives any: an implicit
    `_access.yaml` at the root, for a folder the pipeline may read but not write into."""

    def __init__(self, name: str, root: Path, deny: Sequence[str] = (), default_groups: Sequence[str] = ()) -> None:
        self.name = name
        self.root = root
        self.deny = tuple(deny)
        self.default_groups = tuple(sorted(set(default_groups)))

    def list_objects(self) -> Iterator[SourceObject | SkippedObject]:
        if not self.root.is_dir():
            raise ListingError(f"source {self.name!r}: folder {self.root} does not exist or is not a folder")
        resolver = AccessResolver()
        for folder, names in self._walk():
            rel_folder = self._rel(folder)
            rule = None
            if (folder / ACCESS_FILE).is_symlink() or ACCESS_FILE in names:
                rule = self._access_rule(folder / ACCESS_FILE, names)
            if rel_folder == "":
                rule = with_default_groups(rule, self.default_groups)
            if rule is not None:
                resolver.add(rel_folder, rule)
            for name in sorted(names):
                if name == ACCESS_FILE or name.startswith(".") or (folder / name).is_symlink():
                    continue
                uri = f"{rel_folder}/{name}" if rel_folder else name
                if is_denied(uri, self.deny):
                    continue
                yield self._object(folder / name, uri, resolver)

    def read(self, uri: str) -> bytes:
        path = (self.root / uri).resolve()
        if self.root.resolve() not in path.parents:
            raise ListingError(f"source {self.name!r}: {uri!r} is outside the source folder")
        return path.read_bytes()

    def _walk(self) -> Iterator[tuple[Path, list[str]]]:
        """Each folder (hidden ones skipped) and the names of everything in it but its folders,
        hidden files and symlinks included: `files:` keys are checked against all of them. A
        name spelled like an access file but not one, file or folder, stops the listing."""
        def fail(exc: OSError) -> None:
            raise ListingError(f"source {self.name!r}: cannot list {exc.filename}: {exc.strerror}")

        for dirpath, dirnames, filenames in os.walk(self.root, onerror=fail, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            folder = Path(dirpath)
            for name in [*dirnames, *filenames]:
                if is_lookalike(name) or (name == ACCESS_FILE and name in dirnames):
                    error = lookalike_error(str(folder / name)) if name != ACCESS_FILE else AccessFileError(
                        f"{folder / name}: access file is a folder, not a file")
                    raise ListingError(f"source {self.name!r}: {error}")
            yield folder, list(filenames)

    def _rel(self, folder: Path) -> str:
        rel = folder.relative_to(self.root).as_posix()
        return "" if rel == "." else rel

    def _access_rule(self, path: Path, names: list[str]) -> AccessRule:
        where = str(path)
        try:
            path = self._inside_root(path)
            if not stat.S_ISREG(path.stat().st_mode):
                raise ListingError(f"{where}: access file is not a regular file")
            if path.stat().st_size > MAX_ACCESS_FILE_BYTES:
                raise ListingError(f"{where}: access file larger than 1 MiB; it cannot be right")
            rule = parse_access_file(path.read_text(encoding="utf-8"), where)
            check_overrides(rule, where, names)
            return rule
        except (AccessFileError, UnicodeDecodeError, OSError) as exc:
            # A broken ACL must not silently widen or narrow access: stop this source's sync.
            raise ListingError(f"source {self.name!r}: {exc}") from exc

    def _inside_root(self, path: Path) -> Path:
        """The access file's real path; a symlink must resolve to a file inside the root."""
        if not path.is_symlink():
            return path
        try:
            target = path.resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            raise ListingError(f"{path}: access file is a symlink whose target does not exist ({exc}); "
                               "fix the link or the folder's access cannot be known") from exc
        if self.root.resolve() not in target.parents:
            raise ListingError(f"{path}: access file is a symlink to {target}, outside the source folder; "
                               "an access file must live inside the source")
        return target

    def _object(self, path: Path, uri: str, resolver: AccessResolver) -> SourceObject | SkippedObject:
        try:
            info = path.lstat()
            if not stat.S_ISREG(info.st_mode):
                return SkippedObject(uri, f"{path} is not a regular file ({_file_type(info.st_mode)}); it is never opened")
            size = info.st_size
            checksum = "sha256:" + sha256_file(path)
        except OSError as exc:
            return SkippedObject(uri, f"cannot read {path}: {exc.strerror}; check its permissions")
        return SourceObject(uri=uri, checksum=checksum, size=size, acl_groups=resolver.groups_for(uri))


def _file_type(mode: int) -> str:
    for test, label in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                        (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return label
    return "not a regular file"
