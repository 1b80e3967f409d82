"""One run's summary as a fold over its events, one event at a time.

`apollo runs` shows a row per run. Folding the events into a small state, instead of
reading a run's whole history to summarise it, lets an index keep the state and fold only
what was appended since: the same state whether it was built in one pass or many.
Pure: no I/O, the state is a function of the events folded into it, in stream order.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from events.base import Event
from events.episode import AnswerGraded, EpisodeEnded, TrajectorySealed
from events.evolve import RoundCompleted
from events.model import ModelCallFailed
from events.run import ProblemSubmitted, RunCancelled, RunCompleted, RunFailed, RunStarted
from handlers.run_settings import recorded_policy_model
from replay.dataset_scores import INCOMPLETE_REASONS
from replay.run_ending import done_reason_read, round_incomplete

SUBMITTED_TAG = "problem.submitted"


class RunSummary(msgspec.Struct, kw_only=True):
    """Everything a run's row needs, folded from its events so far."""

    run_id: str
    listed: bool = False
    """A submission is recorded (readable or not): the run is one `apollo runs` lists."""
    events: int = 0
    unreadable: int = 0
    last_seq: int = 0
    root_at: datetime | None = None
    """When the first readable event happened."""
    fork_last: str | None = None
    """A fork's last copied event id, when its first event is a fork's submission."""
    fork_found: bool = False
    copied_max: datetime | None = None
    own_min: datetime | None = None
    submitted: bool = False
    question: str = ""
    data_source: str | None = None
    dataset: str | None = None
    submitted_workflow: str | None = None
    submitted_model: str | None = None
    parent_run_id: str | None = None
    problem_id: str | None = None
    started: bool = False
    started_workflow: str | None = None
    started_model: str | None = None
    status: str = "running"
    score: float | None = None
    answer: str | None = None
    steps: int | None = None
    ended_at: datetime | None = None
    reason: str | None = None
    grader: str | None = None
    grader_version: str | None = None
    policy_version: str | None = None
    failure: str | None = None
    """The main episode's last failed model call, which is why a run ended ``model_failed``."""
    rounds: int = 0
    """Evolve rounds completed, and how many of them without the model's answer judged: a run
    whose every round ended so is not completed, whatever its ``run.completed`` says."""
    rounds_incomplete: int = 0


def fold(summary: RunSummary, seq: int, event: Event) -> None:
    """Fold one readable event of the run (stream order) into ``summary``, in place."""
    summary.events += 1
    summary.last_seq = max(summary.last_seq, seq)
    _fold_times(summary, event)
    if isinstance(event, ProblemSubmitted):
        if not summary.submitted:
            _fold_submission(summary, event)
    elif isinstance(event, RunStarted):
        if not summary.started:
            summary.started = True
            summary.started_workflow, summary.started_model = event.workflow, _settings_model(event.settings)
    elif isinstance(event, AnswerGraded):
        if event.episode == "main":  # no ground truth: the recorded 0 is no grade
            summary.score = None if event.method == "ungraded" else event.score
            summary.answer = event.answer
            summary.grader, summary.grader_version = event.grader or None, event.grader_version or None
    elif isinstance(event, EpisodeEnded):
        if event.episode == "main":
            summary.steps = event.steps
    elif isinstance(event, RoundCompleted):
        summary.rounds += 1
        summary.rounds_incomplete += round_incomplete(event.done_reason)
    elif isinstance(event, ModelCallFailed):
        if event.episode == "main" or (event.role == "policy" and summary.failure is None):
            summary.failure = f"{event.role} model call failed ({event.kind}): {event.message}"
    elif isinstance(event, TrajectorySealed):
        if event.episode == "main":
            versions = event.policy_versions
            summary.policy_version = event.policy_version or (str(versions[-1]) if versions else None)
    elif summary.ended_at is None:  # the first ending is the run's
        _fold_ending(summary, event)


def fold_unreadable(summary: RunSummary, seq: int, tag: str) -> None:
    """Count a stored message of the run that cannot be read as an event."""
    summary.unreadable += 1
    summary.last_seq = max(summary.last_seq, seq)
    summary.listed = summary.listed or tag == SUBMITTED_TAG


def _fold_submission(summary: RunSummary, event: ProblemSubmitted) -> None:
    summary.submitted = summary.listed = True
    summary.question = " ".join(event.question.split())
    summary.data_source, summary.dataset = event.data_source, _dataset(event)
    summary.submitted_workflow, summary.submitted_model = event.workflow, _settings_model(event.config)
    summary.parent_run_id, summary.problem_id = event.parent_run_id, event.problem_id


def _fold_ending(summary: RunSummary, event: Event) -> None:
    done_reason = done_reason_read(event, summary.rounds, summary.rounds_incomplete) \
        if isinstance(event, RunCompleted) else None
    if done_reason in INCOMPLETE_REASONS:
        # ended without the model's answer being judged (its server failed): no score, and not "completed"
        summary.status, summary.ended_at, summary.score = "failed", event.occurred_at, None
        summary.reason = f"not completed ({done_reason}): {summary.failure or 'no model call failure recorded'}"
    elif isinstance(event, RunCompleted):
        summary.status, summary.ended_at = "completed", event.occurred_at
        summary.score = event.score if event.score is not None else summary.score
        summary.answer = event.answer if event.answer is not None else summary.answer
    elif isinstance(event, RunFailed):
        summary.status, summary.ended_at, summary.reason = "failed", event.occurred_at, event.reason
    elif isinstance(event, RunCancelled):
        summary.status, summary.ended_at = "cancelled", event.occurred_at
        summary.reason = f"{event.reason} (by {event.by})" if event.by else event.reason


def _fold_times(summary: RunSummary, event: Event) -> None:
    """Track what the run's start time needs (see :func:`began_at`)."""
    at = event.occurred_at
    if summary.root_at is None:
        summary.root_at = at
        fork = event.metadata.get("fork") if isinstance(event, ProblemSubmitted) else None
        last = fork.get("last_copied_id") if isinstance(fork, dict) else None
        if last is not None and last != event.event_id:  # a fork copying nothing began at its root
            summary.fork_last = last
        return
    if summary.fork_last is None:
        return
    if not summary.fork_found:
        summary.copied_max = at if summary.copied_max is None else max(summary.copied_max, at)
        summary.fork_found = event.event_id == summary.fork_last
    else:
        summary.own_min = at if summary.own_min is None else min(summary.own_min, at)


def began_at(summary: RunSummary) -> datetime | None:
    """When the run itself began: its first event, or for a fork its first event of its own.

    A fork's copied prefix keeps the parent's times, and forks made before their submission
    carried their own time copy the parent's submission time too: the first event after the
    copied prefix (or a submission newer than it) is when the fork began.
    """
    root = summary.root_at
    if root is None or not summary.fork_found or summary.copied_max is None or root > summary.copied_max:
        return root
    return summary.own_min or root


def workflow(summary: RunSummary) -> str:
    if summary.started:
        return summary.started_workflow or ""
    return summary.submitted_workflow if summary.submitted_workflow is not None else "?"


def policy_model(summary: RunSummary) -> str:
    return summary.started_model or summary.submitted_model or "?"


def _settings_model(settings: Any) -> str | None:
    return recorded_policy_model(settings) if isinstance(settings, dict) else None


def _dataset(submitted: ProblemSubmitted) -> str:
    """The dataset file's name for `apollo run` runs, else the problem's data source."""
    name = submitted.metadata.get("dataset")
    if isinstance(name, str) and name:
        suffix = f"_{submitted.workflow}"  # `apollo run` names its runs <dataset>_<workflow>
        return name.removesuffix(suffix) if name.endswith(suffix) else name
    return submitted.data_source
