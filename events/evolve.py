"""The self-evolution workflow: rounds, verifier reports, votes and memory writes."""

from __future__ import annotations

import msgspec

from events.base import Event


class RoundStarted(Event, frozen=True, kw_only=True, tag="round.started"):
    """A branch began an evolve round; the memory it reads is frozen here."""

    round: int
    """0-based round number within the branch."""
    branch: str | None = None
    """Branch id (``None`` in single-model runs)."""
    previous_solutions: str = ""
    """The earlier attempts shown to the policy this round, as rendered text."""
    memory_entries: list[str] = []
    """Ids of the memory entries that text was rendered from, best first."""


class VerifierReported(Event, frozen=True, kw_only=True, tag="verifier.reported"):
    """One verifier finished: its report and its 0/1 judgment (0 when it never gave one)."""

    round: int
    verifier: int
    """0-based index of the verifier within the round."""
    judgment: int
    """1: judged correct; 0: judged wrong, or no valid report after the retries."""
    report: str
    """The report body (without tags); empty when there was none."""
    valid: bool
    """False when the verifier never produced a well-formed report."""
    retries: int = 0
    """Format retries this verifier needed."""
    reason: str = "report"
    """``report``, ``no_valid_report`` or ``model_failed``."""
    branch: str | None = None


class VerdictReached(Event, frozen=True, kw_only=True, tag="verdict.reached"):
    """All verifiers of a round reported; the majority decides (ties by the tie rule)."""

    round: int
    judgments: list[int]
    """Per verifier, in verifier order."""
    majority: int
    approvals: int
    """How many verifiers judged the solution correct."""
    tie: bool
    tie_rule: str
    branch: str | None = None


class MemoryEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One solution memory record: an attempt, its assessment and its score dimensions."""

    entry_id: str
    round: int
    branch: str | None = None
    solution: str
    """The verification brief of the attempt (what the verifiers checked)."""
    feedback: str
    """The representative verifier report (without tags)."""
    answer: str | None = None
    """The attempt's extracted final answer."""
    score: float | None = None
    """The verifiers' majority judgment (0/1); never the ground truth."""
    vote: float | None = None
    """Share of verifiers judging the attempt correct."""
    complexity: int = 0
    """Length of the solution text; shorter ranks higher."""


class MemoryWritten(Event, frozen=True, kw_only=True, tag="memory.written"):
    """The only way memory changes: one entry appended to a named memory."""

    memory: str = "solutions"
    entry: MemoryEntry


class RoundCompleted(Event, frozen=True, kw_only=True, tag="round.completed"):
    """A round ended. ``correct`` is a metric against the ground truth, never fed back."""

    round: int
    answer: str | None = None
    majority: int | None = None
    """The verifiers' verdict (``None`` when verification is off)."""
    approvals: int = 0
    verifiers: int = 0
    correct: float | None = None
    """Grade of the round's answer against the ground truth (``None``: ungraded)."""
    done_reason: str = "answer"
    """How the round's policy episode ended."""
    branch: str | None = None
