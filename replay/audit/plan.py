"""Which recorded grades `apollo regrade` computes again, from what text, and which it cannot.

Pure: a run's records and the graders on hand go in, a :class:`RunPlan` comes out; the
engine grades the tasks and appends what they give. Every ground-truth grade of the run is
planned (an evolve run has one per round); a grade already re-computed by the same grader
at the same version is planned as done, so a second regrade adds nothing. A grade first
given by that very version is computed again all the same: the record then says the grade
still stands (and the latest regrade is what an export with regraded rewards reads).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

import msgspec

from events.episode import AnswerGraded, AnswerRegraded
from events.record import Recorded
from events.run import ProblemSubmitted, RunStarted
from handlers.catalog import Catalog, ExtensionMissing
from handlers.context import derive_id
from handlers.episode.graded_input import graded_episode, regrade_text, run_grader
from handlers.episode.protocol import WHOLE_TEXT_GRADERS
from handlers.ports import Grade, grading_metadata
from handlers.rewards import compute_reward
from handlers.run_settings import RunSettings, RunSettingsError, run_settings_of

NO_GRADE: Final = "no_grade"
NO_GROUND_TRUTH: Final = "no_ground_truth"
NO_ANSWER: Final = "no_answer"
GRADER_MISSING: Final = "grader_missing"
DOMAIN_MISSING: Final = "domain_missing"
UNREADABLE: Final = "unreadable_settings"
SKIP_KINDS: Final = (NO_GRADE, NO_GROUND_TRUTH, NO_ANSWER, GRADER_MISSING, DOMAIN_MISSING, UNREADABLE)
"""Why a run gives nothing to regrade; each kind is reported as one line."""


class RegradeTask(msgspec.Struct, frozen=True, kw_only=True):
    """One recorded ground-truth grade, to compute again with ``grader``."""

    run_id: str
    graded: AnswerGraded
    ground_truth: str
    grader: str
    version: str
    text: str | None
    """What the grader reads; ``None``: the grade had no answer (it stays 0, nothing is recorded)."""
    answer: str | None = None
    """The final answer as read today (today's extraction, see ``current_extraction``)."""
    metadata: dict[str, Any] = {}
    invalid_turns: int = 0
    steps: int = 0
    done: AnswerRegraded | None = None
    """An earlier regrade by the same grader at the same version: nothing to compute."""

    @property
    def event_id(self) -> str:
        """The id its ``answer.regraded`` gets: one per grade, grader and version."""
        return derive_id(self.graded.event_id, "regrade", f"{self.grader}@{self.version}")


class RunPlan(msgspec.Struct, frozen=True, kw_only=True):
    """A run's grades to compute again, or why there are none (``skipped``, one of :data:`SKIP_KINDS`)."""

    run_id: str
    tasks: list[RegradeTask] = []
    skipped: str | None = None
    reason: str = ""
    """One line: why the run was skipped."""
    settings: RunSettings = RunSettings()
    """The run's recorded settings, typed (its reward rule reads them)."""


def plan_run(run_id: str, records: Sequence[Recorded], *, grader: str | None, versions: Mapping[str, str],
             catalog: Catalog) -> RunPlan:
    """What regrading run ``run_id`` with ``grader`` (``None``: the grader the run names) means.

    ``versions`` holds the version of every grader on hand, by name; a grader not in it
    is not installed here.
    """
    events = [record.event for record in records]
    submitted = next((e for e in events if isinstance(e, ProblemSubmitted)), None)
    started = next((e for e in events if isinstance(e, RunStarted)), None)
    graded = [(i, e) for i, e in enumerate(events) if isinstance(e, AnswerGraded)]
    if submitted is None or started is None or not graded:
        return RunPlan(run_id=run_id, skipped=NO_GRADE, reason="no grade recorded yet (still running, or it "
                       "failed before answering)")
    truth = submitted.ground_truth
    # A grade with no answer (the episode failed or ran out of steps) names no ground truth itself.
    judged = [(i, e) for i, e in graded if e.method != "ungraded"]
    if truth is None or not judged:
        return RunPlan(run_id=run_id, skipped=NO_GROUND_TRUTH, reason="no ground truth to grade against")
    try:
        run = run_settings_of(started.settings)
    except RunSettingsError as exc:
        return RunPlan(run_id=run_id, skipped=UNREADABLE, reason=f"its recorded settings cannot be read: {exc}")
    name = grader or run_grader(run)
    version = versions.get(name)
    if version is None:
        plugin = run.extensions.get("grader", {}).get(name)
        where = f" from {plugin}, which is" if plugin else ", which is"
        return RunPlan(run_id=run_id, skipped=GRADER_MISSING,
                       reason=f"graded by {name!r}{where} not installed here (--grader NAME regrades it with another)")
    done = {(e.regraded_id, e.grader, e.grader_version): e for e in events if isinstance(e, AnswerRegraded)}
    tasks = []
    for index, grade in judged:
        state = graded_episode(events[: index + 1], grade)
        try:
            text = regrade_text(state, grade, name, catalog)
        except ExtensionMissing as exc:
            return RunPlan(run_id=run_id, skipped=DOMAIN_MISSING, reason=str(exc))
        tasks.append(RegradeTask(
            run_id=run_id, graded=grade, ground_truth=grade.ground_truth or truth, grader=name, version=version,
            text=text, answer=_answer_read(text, grade, name),
            metadata=grading_metadata(state.problem.question, state.problem.metadata) if state.problem else {},
            invalid_turns=state.invalid_turns,
            steps=state.step, done=done.get((grade.event_id, name, version)),
        ))  # fmt: skip
    if all(task.text is None for task in tasks):
        return RunPlan(run_id=run_id, tasks=tasks, skipped=NO_ANSWER, reason="no answer to grade (its grade of 0 "
                       "stands)", settings=run)
    return RunPlan(run_id=run_id, tasks=tasks, settings=run)


def _answer_read(text: str | None, graded: AnswerGraded, grader: str) -> str | None:
    """The answer a regrade reads: the grader's input unless that is the whole reply text."""
    if text is None or grader in WHOLE_TEXT_GRADERS or grader == "reference":
        return graded.answer
    return text


def new_reward(plan: RunPlan, task: RegradeTask, score: float, catalog: Catalog) -> float | None:
    """The episode's reward under the run's recorded reward rule had it been graded ``score``
    (``None``: the rule is a plugin ``catalog`` lacks)."""
    try:
        return compute_reward(plan.settings, catalog, score=score, invalid_turns=task.invalid_turns,
                              steps=task.steps, done_reason=task.graded.done_reason)
    except (ExtensionMissing, ValueError):
        return None


def regraded_event(task: RegradeTask, grade: Grade, reward: float | None, now: datetime) -> AnswerRegraded:
    """The record of ``task`` graded ``grade``.

    It names the grade it re-computes in ``regraded_id`` rather than as its cause: the
    deciders that answer ``answer.graded`` never produce it, and replay verification
    reports any event caused by one of their inputs that they do not produce.
    """
    graded = task.graded
    return AnswerRegraded(
        event_id=task.event_id, run_id=task.run_id, occurred_at=now, correlation_id=graded.correlation_id,
        regraded_id=graded.event_id, episode=graded.episode, role=graded.role, branch=graded.branch,
        answer=task.answer if task.answer is not None else graded.answer, ground_truth=task.ground_truth,
        old_score=graded.score, old_grader=graded.grader or graded.method, old_grader_version=graded.grader_version,
        new_score=grade.score, reward=reward, grader=task.grader, grader_version=task.version,
        method=grade.method, detail=grade.detail,
    )
