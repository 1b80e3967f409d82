"""Sandbox settings and their defaults (documented in docs/sandbox.md)."""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field

UID_BLOCK = 1024
_UID_FLOOR = 10_000_000
_UID_BLOCKS = 2_000_000
_instances = itertools.count()

GIB = 1 << 30
MIB = 1 << 20

ESSENTIAL = (
    "pid_namespace",
    "network_namespace",
    "mount_namespace",
    "filesystem_view",
    "unprivileged_user",
    "no_new_privs",
    "empty_environment",
    "rlimits",
    "seccomp",
)
"""Protections a worker must have unless degraded mode is explicitly allowed."""


@dataclass(frozen=True)
class SandboxConfig:
    """Limits and pool sizes; every limit applies per call."""

    timeout_s: float = 30.0
    max_concurrency: int = 4
    spares: int = 2
    """Workers forked ahead of time so a call does not wait for fork and set-up."""
    memory_bytes: int = 2 * GIB
    """RLIMIT_AS of the worker (its inherited libraries count, about 0.3 GiB)."""
    call_memory_bytes: int = 2 * GIB
    """Memory of the whole call (every process, SysV shm, memfds, scratch files), through a
    memory cgroup per call where the machine allows one (see docs/sandbox.md)."""
    memory_cgroup: bool = True
    """Use a memory cgroup per call when possible; False forces the fallback."""
    reap_grace_s: float = 10.0
    """After the kill at the deadline, how long to wait for the call's processes to be gone
    before its uid is retired (never reused) instead of returned to the pool."""
    cpu_grace_s: float = 1.0
    """RLIMIT_CPU is the timeout plus this (wall-clock timeout is enforced separately)."""
    file_size_bytes: int = 16 * MIB
    scratch_bytes: int = 64 * MIB
    scratch_inodes: int = 64 * 1024
    """Files, directories and links in the scratch tmpfs (``nr_inodes``): without it tmpfs
    allows millions of empty inodes, kernel memory outside ``scratch_bytes`` that also makes
    the call's teardown (the unmount) slow."""
    open_files: int = 256
    processes: int = 64
    """RLIMIT_NPROC (threads included), per call: every live worker has its own uid."""
    max_output_bytes: int = 64 * 1024
    """Per stream; the rest is dropped behind a visible truncation marker."""
    kill_output_bytes: int = 8 * MIB
    """Total output after which the worker is killed (runaway printing)."""
    max_code_bytes: int = 1 * MIB
    uid_base: int | None = None
    """Workers run as uids uid_base .. uid_base + max_concurrency + spares + 1; by default a
    block of its own per sandbox instance (from the pid), so no two sandboxes share a uid."""
    landlock: bool = True
    required: tuple[str, ...] = ESSENTIAL
    allow_degraded: bool = False
    """Run even when a required protection is unavailable (never the default)."""
    start_timeout_s: float = 120.0
    python: str | None = None
    """Interpreter for the fork server; defaults to the running one."""
    extra_python_paths: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.timeout_s <= 0 or self.max_concurrency < 1 or self.spares < 0:
            raise ValueError("timeout_s > 0, max_concurrency >= 1 and spares >= 0 are required")
        if self.max_concurrency + self.spares + 2 > UID_BLOCK:
            raise ValueError(f"max_concurrency + spares must stay below {UID_BLOCK - 2}")


def default_uid_base() -> int:
    """A uid block unlikely to be used by anyone else: per process and per instance."""
    block = (os.getpid() * 16 + next(_instances)) % _UID_BLOCKS
    return _UID_FLOOR + block * UID_BLOCK
