"""What every helper process of a sync does first (parse workers, the chunk step's helper)."""

from __future__ import annotations

import os


def die_with_parent() -> None:
    """A sync killed with -9 cannot stop its helpers, which would go on burning CPU (on a
    pathological file, or on work nobody will read): ask Linux to kill this process when its
    parent dies (no-op elsewhere)."""
    parent = os.getppid()
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)
