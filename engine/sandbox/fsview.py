"""Build the worker's file-system view: a fresh, read-only root with only what Python needs.

Runs in the worker's init process, inside its own mount and PID namespaces. The host's
``/work``, ``/root``, home directories, ``/etc/shadow`` and everything else not listed here
simply do not exist in the new root; the only writable place is the size-capped scratch
tmpfs mounted at ``/tmp`` (also the working directory).
"""

from __future__ import annotations

import os

from engine.sandbox import syscalls as sc

SCRATCH = "/tmp"
_STAGE = "/tmp"  # host path the new root is mounted on (private to this mount namespace)
_SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")
_ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/os-release")
_DEV_NODES = ("null", "zero", "full", "random", "urandom")


def build(python_paths: list[str], uid: int, scratch_bytes: int, mount_proc: bool, scratch_inodes: int = 0) -> None:
    """Mount the new root, pivot into it, and make ``/tmp`` the scratch working directory.

    ``scratch_inodes`` (when positive) caps the files, directories and links in scratch.
    """
    sc.mount(None, "/", None, sc.MS_REC | sc.MS_PRIVATE)
    root = _STAGE
    sc.mount("apollo-root", root, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, "size=4m,mode=0755")
    for path in _SYSTEM_DIRS:
        _expose(root, path)
    for path in _minimal(python_paths):
        _expose(root, path)
    _make_etc(root, uid)
    _make_dev(root)
    os.makedirs(root + SCRATCH, exist_ok=True)
    inodes = f",nr_inodes={scratch_inodes}" if scratch_inodes > 0 else ""
    sc.mount(
        "apollo-scratch",
        root + SCRATCH,
        "tmpfs",
        sc.MS_NOSUID | sc.MS_NODEV,
        f"size={scratch_bytes},mode=0700,uid={uid},gid={uid}{inodes}",
    )
    os.makedirs(root + "/proc", exist_ok=True)
    if mount_proc:
        sc.mount("proc", root + "/proc", "proc", sc.MS_NOSUID | sc.MS_NODEV | sc.MS_NOEXEC)
    os.makedirs(root + "/.old", exist_ok=True)
    sc.mount(None, root, None, sc.MS_REMOUNT | sc.MS_RDONLY | sc.MS_NOSUID | sc.MS_NODEV)
    sc.pivot_root(root, root + "/.old")
    os.chdir("/")
    sc.umount("/.old")
    os.chdir(SCRATCH)


def _minimal(paths: list[str]) -> list[str]:
    """Existing directories, without those already inside another listed or system dir."""
    real = sorted({os.path.realpath(p) for p in paths if p and os.path.isdir(p)})
    kept: list[str] = []
    covered = [d for d in _SYSTEM_DIRS if not os.path.islink(d)]
    for path in real:
        if any(path == c or path.startswith(c + "/") for c in (*covered, *kept)):
            continue
        kept.append(path)
    return kept


def _expose(root: str, path: str) -> None:
    """Recreate ``path`` under ``root``: symlinks as symlinks, directories as read-only binds."""
    if os.path.islink(path):
        os.makedirs(os.path.dirname(root + path), exist_ok=True)
        os.symlink(os.readlink(path), root + path)
        return
    if not os.path.exists(path):
        return
    target = root + path
    if os.path.isdir(path):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w"):
            pass
    sc.mount(path, target, None, sc.MS_BIND | sc.MS_REC)
    sc.mount(None, target, None, sc.MS_BIND | sc.MS_REMOUNT | sc.MS_RDONLY | sc.MS_NOSUID | sc.MS_NODEV)


def _make_etc(root: str, uid: int) -> None:
    os.makedirs(root + "/etc", exist_ok=True)
    with open(root + "/etc/passwd", "w") as f:
        f.write(f"root:x:0:0::/:/nonexistent\nsandbox:x:{uid}:{uid}::{SCRATCH}:/nonexistent\n")
    with open(root + "/etc/group", "w") as f:
        f.write(f"root:x:0:\nsandbox:x:{uid}:\n")
    with open(root + "/etc/hosts", "w") as f:
        f.write("127.0.0.1 localhost\n")
    for path in _ETC_FILES:
        _expose(root, path)


def _make_dev(root: str) -> None:
    os.makedirs(root + "/dev", exist_ok=True)
    for name in _DEV_NODES:
        _expose(root, f"/dev/{name}")
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, f"{root}/dev/{name}")
