"""Small process helpers shared by the engine's supervisors and pools."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """Whether a process with this id exists (one owned by another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
