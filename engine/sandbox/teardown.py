"""What the worker's init clears once the code's processes are gone, before it reports.

The init (C) still holds the call's mount and IPC namespaces while it exits, which takes a
while (it is a fork of the warm interpreter). So that the host's "the call is over" also
means "its files and shared memory are freed", the init unmounts the scratch tmpfs (its
pages and inodes are freed by the unmount itself) and removes every System V object of the
call's IPC namespace first.
"""

from __future__ import annotations

import contextlib
import os

from engine.sandbox import syscalls as sc
from engine.sandbox.fsview import SCRATCH

IPC_RMID = 0
_SYSV = (("shm", "shmctl", "shmid"), ("sem", "semctl", "semid"), ("msg", "msgctl", "msqid"))


def clear_scratch() -> bool:
    """Unmount the scratch tmpfs (the init must not be inside it); True if done."""
    try:
        os.chdir("/")
        sc.umount(SCRATCH)
    except OSError:
        return False
    return True


def clear_sysv_ipc() -> int:
    """Remove every SysV object in this IPC namespace (read from its ``/proc``); how many."""
    libc = sc.libc()
    removed = 0
    for kind, call, column in _SYSV:
        for ident in _ids(f"/proc/sysvipc/{kind}", column):
            args = (ident, 0, IPC_RMID) if kind == "sem" else (ident, IPC_RMID, None)
            if getattr(libc, call)(*args) == 0:
                removed += 1
    return removed


def _ids(path: str, column: str) -> list[int]:
    """The identifiers listed in a ``/proc/sysvipc`` table."""
    with contextlib.suppress(OSError, ValueError, IndexError), open(path) as f:
        lines = f.read().splitlines()
        index = lines[0].split().index(column)
        return [int(line.split()[index]) for line in lines[1:] if line.strip()]
    return []
