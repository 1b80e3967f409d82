"""Run lifecycle: submission, start, completion, failure and cancellation."""

from __future__ import annotations

from typing import Any, Literal

from events.base import Event


class ProblemSubmitted(Event, frozen=True, kw_only=True, tag="problem.submitted"):
    """A user (or any NATS client) asked the engine to solve a problem."""

    problem_id: str
    """Stable id of the problem within its data source."""
    question: str
    """The problem text shown to the policy model."""
    ground_truth: str | None = None
    """Reference answer, used only for grading; never shown to a model."""
    data_source: str = "unknown"
    """Benchmark or origin of the problem (e.g. ``aime24``)."""
    workflow: str = "reason"
    """Workflow name: ``reason`` (one episode) or ``evolve``."""
    config: dict[str, Any] = {}
    """Overrides of the engine's run settings for this run only."""
    metadata: dict[str, Any] = {}
    """Free-form metadata carried along (never read by deciders)."""
    group_id: str | None = None
    """Samples of the same problem share a group (GRPO); defaults to the run id."""
    sample_index: int = 0
    """Index of this sample within its group."""
    group_size: int | None = None
    """How many samples the group will have (GRPO), when the submitter knows it."""
    parent_run_id: str | None = None
    """Set on forks: the run whose prefix this run continues."""
    fork_seq: int | None = None
    """Set on forks: the parent's stream sequence the fork starts after."""


class RunStarted(Event, frozen=True, kw_only=True, tag="run.started"):
    """The engine accepted a submission; ``settings`` is what every decider reads."""

    workflow: str
    settings: dict[str, Any] = {}
    """The resolved run settings, recorded so replay decides exactly as live did."""
    prompts: Literal["whole", "delta"] = "whole"
    """How the run's episodes record each step's prompt: ``delta``, as its changes from the
    step before by :mod:`events.text_delta` (runs started since prompts were recorded that
    way), or ``whole`` (earlier runs, which replay must re-decide exactly as recorded). Replay
    compares the deltas' bytes, so the algorithm behind ``delta`` never changes: another one
    takes another value here."""


class RunCompleted(Event, frozen=True, kw_only=True, tag="run.completed"):
    """The run reached its end."""

    done_reason: str
    answer: str | None = None
    score: float | None = None


class RunFailed(Event, frozen=True, kw_only=True, tag="run.failed"):
    """The run could not continue; ``reason`` says why in one line."""

    reason: str
    detail: str = ""


class RunCancelled(Event, frozen=True, kw_only=True, tag="run.cancelled"):
    """Someone ended the run before it finished (`apollo cancel`); workers do no more of its work."""

    reason: str
    """Why, in the canceller's words."""
    by: str = ""
    """Who asked: ``user@host`` of the process that cancelled it."""


class EventRejected(Event, frozen=True, kw_only=True, tag="event.rejected"):
    """A message on a run subject could not be decoded; recorded instead of crashing."""

    subject: str
    reason: str
    stream_seq: int = 0
    excerpt: str = ""
    """The first bytes of the rejected payload, for debugging."""


class HandlerFailed(Event, frozen=True, kw_only=True, tag="handler.failed"):
    """A handler kept failing on an event and the engine stopped redelivering it."""

    handler: str
    failed_event_id: str
    failed_type: str
    error: str
    deliveries: int


RUN_ENDINGS = (RunCompleted, RunFailed, RunCancelled)
"""Events that end a run: nothing routed follows them."""
