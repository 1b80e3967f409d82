"""Which of the sandbox's protections this machine applies, probed by a real worker."""

from __future__ import annotations

import asyncio
from typing import Any

from engine.sandbox.config import SandboxConfig
from engine.sandbox.errors import SandboxError
from engine.sandbox.sandbox import PythonSandbox

DESCRIPTIONS = {
    "pid_namespace": "own PID namespace: processes die with the call, others are invisible",
    "network_namespace": "own network namespace: no network, not even the host's loopback",
    "mount_namespace": "own mount namespace",
    "ipc_uts_namespace": "own IPC and hostname namespaces",
    "filesystem_view": "fresh read-only root with only Python's files; /tmp scratch",
    "unprivileged_user": "runs as a per-call unprivileged uid",
    "no_new_privs": "no privilege gain through exec (setuid binaries)",
    "landlock": "Landlock: writes only to scratch, no TCP, no signals outside",
    "seccomp": "seccomp: no kernel keyrings, user namespaces, io_uring, userfaultfd, bpf, perf",
    "memory_cgroup": "one memory limit for the whole call (processes, SysV shm, memfds, files)",
    "ipc_limits": "SysV shared memory and message queues capped in the call's IPC namespace",
    "empty_environment": "empty environment (no inherited secrets)",
    "rlimits": "CPU, memory, file size, open files and process limits",
}


def protection_report() -> list[tuple[str, bool, str]]:
    """``(protection, available, detail)`` for every protection, probed by a real worker."""
    config = SandboxConfig(allow_degraded=True, spares=0, max_concurrency=1)
    try:
        applied = asyncio.run(_probe(config))
    except SandboxError as exc:
        return [("sandbox", False, str(exc))]
    rows = []
    for name, description in DESCRIPTIONS.items():
        value = applied.get(name, "not reported")
        ok = value is True
        rows.append((name, ok, description if ok else f"{value} ({description})"))
    return rows


async def _probe(config: SandboxConfig) -> dict[str, Any]:
    async with PythonSandbox(config) as sandbox:
        return sandbox.protections()
