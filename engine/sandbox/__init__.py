"""Sandboxed execution of model-written Python (the ``python_code`` tool).

A warm fork server forks one isolated worker per call: own PID, network, mount, IPC and
UTS namespaces, a minimal read-only root with a tmpfs scratch directory, a per-call
unprivileged uid, Landlock, seccomp (no kernel keyrings, user namespaces or io_uring),
rlimits, a memory cgroup per call where the machine allows one, an empty environment. A
call ends when every process that ran its code is gone, or is killed at its deadline. See docs/sandbox.md.
"""

from __future__ import annotations

from engine.sandbox.config import ESSENTIAL, SandboxConfig
from engine.sandbox.errors import SandboxError, SandboxUnavailable, WorkerFailed
from engine.sandbox.outcome import SandboxOutcome, tool_json
from engine.sandbox.sandbox import PythonSandbox

__all__ = [
    "ESSENTIAL",
    "PythonSandbox",
    "SandboxConfig",
    "SandboxError",
    "SandboxOutcome",
    "SandboxUnavailable",
    "WorkerFailed",
    "tool_json",
]
