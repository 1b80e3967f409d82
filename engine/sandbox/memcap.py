"""A memory cgroup per call: one limit for everything the call's processes hold.

``RLIMIT_AS`` is per process and does not see System V shared memory once detached,
unmapped memfds or tmpfs pages. A memory cgroup charges all of those to the call, whatever
process made them. The host makes a parent group for the sandbox under its own memory
cgroup (cgroup v2 if the memory controller can be delegated there, else the cgroup v1
memory hierarchy), one child per worker with the call's limit; the worker's init joins it
before forking the code's process; the child is removed once the call's tree is gone.

When neither is writable, :func:`detect` says why and the sandbox falls back (see
docs/sandbox.md: seccomp refuses memfds and user namespaces, the IPC namespace caps SysV
shared memory, ``RLIMIT_AS`` bounds each process).
"""

from __future__ import annotations

import contextlib
import itertools
import os
from dataclasses import dataclass

_instances = itertools.count()


@dataclass
class CallCgroups:
    """The sandbox's parent memory cgroup and how to set limits under it."""

    root: str
    version: int

    def create(self, name: str, limit_bytes: int) -> str:
        """A child group for one worker, limited to ``limit_bytes`` (raises ``OSError``)."""
        path = os.path.join(self.root, name)
        os.mkdir(path)
        try:
            if self.version == 2:
                _write(path, "memory.max", limit_bytes)
                with contextlib.suppress(OSError):  # no swap accounting on this machine
                    _write(path, "memory.swap.max", 0)
                with contextlib.suppress(OSError):  # kernels before 4.19
                    _write(path, "memory.oom.group", 1)
            else:
                _write(path, "memory.limit_in_bytes", limit_bytes)
                with contextlib.suppress(OSError):  # swap accounting off
                    _write(path, "memory.memsw.limit_in_bytes", limit_bytes)
        except OSError:
            remove(path)
            raise
        return path

    def close(self) -> None:
        """Remove the parent group and any child left empty (a child with processes stays)."""
        with contextlib.suppress(OSError):
            for child in os.scandir(self.root):
                if child.is_dir():
                    remove(child.path)
        remove(self.root)


def join(path: str) -> None:
    """Move the calling process into the group at ``path`` (its children follow)."""
    _write(path, "cgroup.procs", 0)


def oom_kills(path: str) -> int:
    """How many processes of the group the kernel killed for memory."""
    name = "memory.events" if os.path.exists(os.path.join(path, "memory.events")) else ("memory.oom_control")
    try:
        with open(os.path.join(path, name)) as f:
            for line in f:
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
    except (OSError, ValueError):
        pass
    return 0


def remove(path: str) -> bool:
    """Remove an empty group; False while it still holds processes. Gone already: True."""
    try:
        os.rmdir(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def detect() -> tuple[CallCgroups | None, str]:
    """A parent group for this sandbox instance, or ``None`` and the reason."""
    name = f"apollo-sandbox-{os.getpid()}-{next(_instances)}"
    reasons = []
    for version, finder in ((2, _v2_dir), (1, _v1_dir)):
        try:
            base = finder()
            _remove_stale(base)
            root = os.path.join(base, name)
            os.mkdir(root)
        except OSError as exc:
            reasons.append(f"cgroup v{version}: {exc.strerror or exc}")
            continue
        if version == 2:
            try:
                _write(root, "cgroup.subtree_control", "+memory")
            except OSError as exc:
                remove(root)
                reasons.append(f"cgroup v2: {exc.strerror or exc}")
                continue
        return CallCgroups(root, version), ""
    return None, "unavailable: " + "; ".join(reasons)


def _remove_stale(base: str) -> None:
    """Empty groups left by sandboxes whose process is gone (a crashed host)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(base):
            parts = entry.name.split("-")
            if len(parts) != 4 or parts[:2] != ["apollo", "sandbox"] or not parts[2].isdigit():
                continue
            if os.path.exists(f"/proc/{parts[2]}"):
                continue
            with contextlib.suppress(OSError):
                for child in os.scandir(entry.path):
                    if child.is_dir():
                        remove(child.path)
            remove(entry.path)


def _v2_dir() -> str:
    mount = _mount_point("cgroup2", None)
    own = _own_group("")
    base = os.path.join(mount, own.lstrip("/"))
    with open(os.path.join(base, "cgroup.controllers")) as f:
        if "memory" not in f.read().split():
            raise OSError(0, "no memory controller here")
    with open(os.path.join(base, "cgroup.subtree_control")) as f:
        enabled = "memory" in f.read().split()
    if not enabled:
        _write(base, "cgroup.subtree_control", "+memory")  # fails where processes live
    return base


def _v1_dir() -> str:
    mount = _mount_point("cgroup", "memory")
    return os.path.join(mount, _own_group("memory").lstrip("/"))


def _own_group(controller: str) -> str:
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if controllers.split(",") == [controller] or (controller and controller in controllers.split(",")):
                return path
    raise OSError(0, f"not in a {controller or 'v2'} cgroup")


def _mount_point(fstype: str, option: str | None) -> str:
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fields = right.split()
            if len(fields) < 3 or fields[0] != fstype:
                continue
            if option is None or option in fields[2].split(","):
                return left.split()[4]
    raise OSError(0, f"no {fstype} {option or ''} mount".strip())


def _write(path: str, name: str, value: object) -> None:
    with open(os.path.join(path, name), "w") as f:
        f.write(str(value))
