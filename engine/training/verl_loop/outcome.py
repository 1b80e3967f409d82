"""What a finished (or unfinished) apollo run gives verl: a reward, or the reason to mask the sample.

A sample is **masked** (every response token's mask 0, ``extra_fields["apollo_masked"]``
True with the reason in ``apollo_failure``) when the run did not end in time, failed or was
cancelled, a model call failed, a tool could not run (sandbox failure: ``tool.failed``), no
trajectory was sealed or it is incomplete or ungraded, or no call was generated into the
sequence. Its ``reward_score`` is 0 but no token of it is trained; :mod:`.masking` drops
such rows before the group statistics.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from events.episode import TrajectorySealed
from events.model import ModelCallFailed
from events.record import Recorded
from events.run import RunCancelled, RunCompleted, RunFailed
from events.tool import ToolFailed


class RunOutcome(msgspec.Struct, frozen=True, kw_only=True):
    run_id: str
    reward: float | None = None
    """The sealed trajectory's reward (from the grade); ``None`` when masked."""
    score: float | None = None
    failure: str | None = None
    """Why the sample is masked; ``None``: trainable."""
    done_reason: str = ""
    policy_versions: list[int] = []

    @property
    def masked(self) -> bool:
        return self.failure is not None


def outcome_of(run_id: str, records: Sequence[Recorded] | None, *, timeout: float) -> RunOutcome:
    """Read the run's ending, failures and sealed trajectory (``records=None``: it did not end)."""
    if records is None:
        return RunOutcome(run_id=run_id, failure=f"the run did not end within {timeout:g} s")
    events = [r.event for r in records]
    failure = _failure(events)
    sealed = next((e for e in events if isinstance(e, TrajectorySealed) and e.role == "policy"
                   and e.episode == "main"), None)
    if failure is None and sealed is None:
        failure = "no trajectory was sealed"
    elif failure is None and sealed is not None and not sealed.complete:
        failure = f"the trajectory is incomplete ({sealed.done_reason})"
    elif failure is None and sealed is not None and not sealed.graded:
        failure = "the trajectory was not graded (no ground truth)"
    if failure is not None or sealed is None:
        return RunOutcome(run_id=run_id, failure=failure)
    return RunOutcome(run_id=run_id, reward=float(sealed.reward), score=float(sealed.score),
                      done_reason=sealed.done_reason, policy_versions=list(sealed.policy_versions))


def _failure(events: Sequence[object]) -> str | None:
    for event in events:
        if isinstance(event, ModelCallFailed):
            return f"a model call failed ({event.kind}): {event.message}"
        if isinstance(event, ToolFailed):
            return f"tool {event.tool} could not run ({event.kind}): {event.error}"
        if isinstance(event, RunFailed):
            return f"the run failed: {event.reason}"
        if isinstance(event, RunCancelled):
            return f"the run was cancelled: {event.reason}"
    if not any(isinstance(e, RunCompleted) for e in events):
        return "the run did not complete"
    return None
