"""Shared buffers of the embedded server sized to the machine, not to initdb's smallest one.

initdb gives every new server 128 MB of shared buffers, a size meant to start anywhere. A search
reads its candidates' rows and index pages from there; with 128 MB, a 100,000-chunk index (about
1 GB with its indexes) was read mostly through the operating system's cache, a system call and a
copy per page, and a broad caller's hybrid + rerank search took 53 to 56 ms at the median against
38 to 43 with 3 GB (bench/README.md, session 32). PostgreSQL's own guidance for a dedicated server
is a quarter of the memory; the embedded server shares its machine with the sync's model and
parsers, so it takes an eighth, within [128 MB, 8 GB], of the physical memory or of the control
group's limit where one is lower (a container's).

The setting is written to `postgresql.auto.conf` (where ALTER SYSTEM writes) while the server is
down, only where nobody chose a value: none in that file, and `postgresql.conf` still holding
initdb's own and including no other file. An operator's ALTER SYSTEM or edit of postgresql.conf
always wins."""

from __future__ import annotations

import os
import re
from pathlib import Path

SHARE = 8  # of the memory
FLOOR_MB, CEILING_MB = 128, 8 * 1024
INITDB_VALUE = "128MB"  # what initdb writes into postgresql.conf
_SETTING = re.compile(r"^\s*shared_buffers\s*=\s*'?([^'#\s]*)'?", re.MULTILINE)
_INCLUDE = re.compile(r"^\s*include(?:_if_exists|_dir)?\s*=?\s*'", re.MULTILINE)  # a setting may hide there
_CGROUP_LIMITS = (Path("/sys/fs/cgroup/memory.max"), Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"))


def machine_memory() -> int | None:
    """Bytes of memory this machine gives its processes: physical memory, or the control
    group's limit where it is lower. None where neither can be read."""
    try:
        memory: int | None = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        memory = None
    for limit_file in _CGROUP_LIMITS:
        try:
            text = limit_file.read_text(encoding="ascii").strip()
        except OSError:
            continue
        if text.isdigit():
            memory = int(text) if memory is None else min(memory, int(text))
    return memory


def shared_buffers_for(memory: int | None) -> str | None:
    """The value for a machine of `memory` bytes; None where it would not exceed initdb's."""
    if not memory or memory <= 0:
        return None
    megabytes = min(CEILING_MB, memory // SHARE // (1024 * 1024))
    return f"{megabytes}MB" if megabytes > FLOOR_MB else None


def size_buffers(pgdata: Path, memory: int | None = None) -> str | None:
    """Write the machine's value into `pgdata`'s postgresql.auto.conf unless a value was chosen
    there or in postgresql.conf; returns what was written (None: nothing). Call it only while
    the server is down: PostgreSQL reads the files at start and rewrites the auto file itself."""
    auto, conf = pgdata / "postgresql.auto.conf", pgdata / "postgresql.conf"
    try:
        auto_text = auto.read_text(encoding="utf-8") if auto.exists() else ""
        conf_text = conf.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # a folder we cannot read is left as it is; the server reports its own problems
    chosen = _SETTING.findall(conf_text)
    if _SETTING.search(auto_text) or (chosen and chosen[-1] != INITDB_VALUE) or _INCLUDE.search(conf_text):
        return None
    value = shared_buffers_for(machine_memory() if memory is None else memory)
    if value is None:
        return None
    separator = "" if not auto_text or auto_text.endswith("\n") else "\n"
    try:
        with auto.open("a", encoding="utf-8") as f:
            f.write(f"{separator}shared_buffers = '{value}'\n")
    except OSError:
        return None  # not sizing the buffers never stops the server from starting
    return value
