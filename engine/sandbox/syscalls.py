"""Thin ctypes wrappers for the Linux calls the standard library lacks (unshare, mount...)."""

from __future__ import annotations

import ctypes
import os
import platform

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38

_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446

_libc: ctypes.CDLL | None = None


def libc() -> ctypes.CDLL:
    """The C library, loaded on first use (never at import time)."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    return _libc


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")
    return result


def unshare(flags: int) -> None:
    """Move this process into new namespaces (``CLONE_NEWPID`` applies to its children)."""
    _check(libc().unshare(flags), "unshare")


def mount(
    source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None
) -> None:
    """mount(2)."""
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    _check(
        libc().mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
        f"mount {target}",
    )


def umount(target: str, flags: int = MNT_DETACH) -> None:
    """umount2(2)."""
    _check(libc().umount2(target.encode(), flags), f"umount {target}")


def pivot_root(new_root: str, put_old: str) -> None:
    """pivot_root(2) (no glibc wrapper)."""
    number = _PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise OSError(38, f"pivot_root: unknown syscall number on {platform.machine()}")
    _check(libc().syscall(number, new_root.encode(), put_old.encode()), "pivot_root")


def prctl(option: int, arg: int) -> None:
    """prctl(2) with one argument."""
    _check(libc().prctl(option, ctypes.c_ulong(arg), 0, 0, 0), "prctl")


def syscall(number: int, *args: object) -> int:
    """A raw syscall; raises ``OSError`` on failure."""
    return _check(libc().syscall(number, *args), f"syscall {number}")
