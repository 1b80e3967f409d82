"""Small process helpers shared by the engine's supervisors and pools."""

from __future__ import annotations

import gc
import os
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether a process with this id exists (one owned by another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie lingers until its new parent reaps it)."""
    if not alive(pid):
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc: alive is all we know
    return state != "Z"


def freeze_startup_heap() -> None:
    """Leave everything allocated so far out of the cyclic garbage collector's scans.

    A worker holds hundreds of thousands of long-lived objects once the SDKs it uses are
    imported and its clients are connected. Without this, every full collection walks them
    all again: in ``bench/episode.py`` a pause of about 70 ms every few hundred episodes,
    stalling every run in flight (figures in docs/workers.md). Objects made later are
    collected as usual. Frozen ones are still freed by reference counting; only a cycle
    among them would never be reclaimed. Call once, from a long-running process, after
    start-up.
    """
    gc.collect()
    gc.freeze()
