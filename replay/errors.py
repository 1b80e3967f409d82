"""Errors of the replay layer: ReplayError is the root.

ReplayError
 +-- NondeterminismError   re-run deciders emitted other events than the recorded ones
 +-- ProjectionMismatch    a live checkpoint differs from a clean rebuild
 +-- ForkError             a fork was asked for at a point that cannot be forked
 +-- HistoryError          a history (file or log) is empty, unordered or unreadable
 +-- CheckpointUnusable    a checkpoint cannot be turned back into a state (rebuild instead)
"""

from __future__ import annotations


class ReplayError(Exception):
    """Something read back from the log does not hold together."""


class NondeterminismError(ReplayError):
    """Deciders re-run over a recorded history did not reproduce it."""

    def __init__(self, message: str, *, run_id: str, seq: int | None) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.seq = seq


class ProjectionMismatch(ReplayError):
    """The live (checkpointed) state of a projection is not what a rebuild gives."""


class ForkError(ReplayError):
    """The requested fork point or run cannot be forked."""


class HistoryError(ReplayError):
    """A history is empty, out of order or not readable as events."""


class CheckpointUnusable(ReplayError):
    """A stored state cannot be decoded into its projection's type; rebuild from the log."""
