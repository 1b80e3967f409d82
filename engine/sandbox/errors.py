"""Sandbox errors.

SandboxError (EngineError)
 +-- SandboxUnavailable   a required protection is missing, or the fork server cannot start
 +-- WorkerFailed         a worker could not be prepared (infrastructure, not user code)
"""

from __future__ import annotations

from engine.errors import EngineError


class SandboxError(EngineError):
    """Root of the sandbox's own failures (never raised for the user's code)."""


class SandboxUnavailable(SandboxError):
    """The sandbox cannot provide the protections it was configured to require."""


class WorkerFailed(SandboxError):
    """A worker process could not be set up."""
