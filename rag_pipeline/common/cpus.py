"""The cores this process may run on (its CPU affinity, which a container's cpuset or `taskset`
narrows), not the machine's count: what the parse pool, the encoder's threads and the stage
step's writers size themselves by."""

from __future__ import annotations

import os


def usable_cpus() -> set[int]:
    """The CPU numbers this process may run on."""
    try:
        return os.sched_getaffinity(0)
    except AttributeError:  # not Linux
        return set(range(os.cpu_count() or 1))


def usable_cores() -> int:
    """How many cores this process may run on, at least one."""
    return max(1, len(usable_cpus()))
