"""Re-grading recorded answers: no model call, one ``answer.regraded`` per grade computed.

Each run is planned from its own history (:mod:`replay.audit.plan`), its grades are computed
by the grading adapter, and what they gave is appended to the run in one go. The events'
ids are fixed by grade, grader and version, and the plan skips grades already re-graded at
that version, so a regrade that was stopped resumes where it was and nothing is recorded
twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from engine.eventlog.port import EventLog
from engine.grading.router import RegistryGrader
from events.base import Event
from events.episode import AnswerRegraded
from events.policy import RolloutTrained
from events.record import Recorded
from replay.audit.flips import GradeOutcome, grade_outcome
from replay.audit.plan import NO_ANSWER, RegradeTask, RunPlan, new_reward, plan_run, regraded_event
from replay.run_table import RunRow

FAILED_METHODS = (":error", ":unknown")
"""Grades that say the grader could not run (a dead worker...): never recorded, retried next time."""


@dataclass
class RunRegrade:
    """What regrading one run gave."""

    plan: RunPlan
    outcomes: list[GradeOutcome] = field(default_factory=list)
    appended: int = 0
    failures: list[str] = field(default_factory=list)
    """One line per grade the grader could not compute."""


class Regrader:
    """Regrades runs with ``grader`` (``name``: one grader for all; ``None``: each run's own)."""

    def __init__(self, log: EventLog, grader: RegistryGrader, *, name: str | None) -> None:
        self.log = log
        self.grader = grader
        self.name = name
        self.catalog = grader.catalog
        self.versions = {key: grader.version_of(spec) for key, spec in self.catalog.graders.items()}

    async def regrade(self, run_id: str, records: Sequence[Recorded], row: RunRow) -> RunRegrade:
        plan = plan_run(run_id, records, grader=self.name, versions=self.versions, catalog=self.catalog)
        result = RunRegrade(plan=plan)
        if plan.skipped is not None and plan.skipped != NO_ANSWER:
            return result
        trained = [r.event for r in records if isinstance(r.event, RolloutTrained)]
        graded = await asyncio.gather(*(self._grade(plan, task) for task in plan.tasks))
        new_events: list[Event] = []
        for task, (event, failure) in zip(plan.tasks, graded, strict=True):
            if failure is not None:
                result.failures.append(failure)
                continue
            if task.done is not None:
                result.outcomes.append(grade_outcome(task, task.done.new_score, "already", row, trained))
            elif event is None:
                result.outcomes.append(grade_outcome(task, task.graded.score, "kept", row, trained))
            else:
                new_events.append(event)
                result.outcomes.append(grade_outcome(task, event.new_score, "regraded", row, trained))
        if new_events:
            await self.log.append_many(new_events)
            result.appended = len(new_events)
        return result

    async def _grade(self, plan: RunPlan, task: RegradeTask) -> tuple[AnswerRegraded | None, str | None]:
        """The ``answer.regraded`` for ``task`` (``None``: nothing to compute), or why it failed."""
        if task.done is not None or task.text is None:
            return None, None
        grade = await self.grader.grade(task.text, task.ground_truth, task.grader, metadata=task.metadata)
        if grade.method.endswith(FAILED_METHODS):
            return None, f"run {task.run_id} ({task.graded.episode}): {task.grader} could not grade: {grade.detail}"
        reward = new_reward(plan, task, grade.score, self.catalog)
        return regraded_event(task, grade, reward, datetime.now(UTC)), None
