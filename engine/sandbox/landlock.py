"""Landlock (Linux >= 5.13) through raw syscalls: an unprivileged file-system allow-list.

Used as a second wall inside the mount namespace: reads anywhere in the (already minimal)
root, writes only under the scratch directory and to ``/dev`` nodes; on newer kernels also
no TCP bind/connect and no signals or abstract sockets outside the sandbox.
"""

from __future__ import annotations

import ctypes
import os

from engine.sandbox import syscalls

_EXECUTE, _WRITE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_ALL_V1 = (1 << 13) - 1
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_NET_ALL = (1 << 0) | (1 << 1)
_SCOPE_ALL = (1 << 0) | (1 << 1)
_RULE_PATH_BENEATH = 1
_CREATE_RULESET_VERSION = 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = (("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64))


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def abi_version() -> int:
    """The kernel's Landlock ABI version, 0 when unavailable."""
    try:
        return syscalls.syscall(
            syscalls.SYS_LANDLOCK_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION
        )
    except OSError:
        return 0


def _fs_mask(abi: int) -> int:
    mask = _ALL_V1
    if abi >= 2:
        mask |= _REFER
    if abi >= 3:
        mask |= _TRUNCATE
    if abi >= 5:
        mask |= _IOCTL_DEV
    return mask


def restrict(read_paths: list[str], write_paths: list[str]) -> int:
    """Confine this process (and its future children); return the ABI used (0: none).

    Needs ``no_new_privs`` (or CAP_SYS_ADMIN) and is irreversible.
    """
    abi = abi_version()
    if abi <= 0:
        return 0
    handled = _fs_mask(abi)
    attr = _RulesetAttr(
        fs=handled, net=_NET_ALL if abi >= 4 else 0, scoped=_SCOPE_ALL if abi >= 6 else 0
    )
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    ruleset = syscalls.syscall(syscalls.SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), size, 0)
    try:
        read_mask = _EXECUTE | _READ_FILE | _READ_DIR
        rules = [(p, read_mask) for p in read_paths] + [(p, handled) for p in write_paths]
        for path, mask in rules:
            _allow(ruleset, path, mask)
        syscalls.syscall(syscalls.SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0)
    finally:
        os.close(ruleset)
    return abi


def _allow(ruleset: int, path: str, mask: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            mask &= _EXECUTE | _WRITE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
        rule = _PathBeneath(allowed=mask, parent_fd=fd)
        syscalls.syscall(
            syscalls.SYS_LANDLOCK_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0
        )
    finally:
        os.close(fd)
