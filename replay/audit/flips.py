"""The flip report: per dataset and source, accuracy before and after a regrade, the grades
that flipped each way, and the training steps that were paid a reward that flipped.

A grade counts as correct when its score is above zero, as in `apollo run`'s accuracy.
Every ground-truth grade of the regraded runs counts once (one per reason run, one per
round of an evolve run); a grade with no answer counts as 0 before and after.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Final, Literal

import msgspec

from events.policy import RolloutTrained
from replay.audit.paid import paid_from
from replay.audit.plan import RegradeTask
from replay.run_table import RunRow

Status = Literal["regraded", "already", "kept"]
STATUSES: Final = ("regraded", "already", "kept")
"""``regraded``: computed now; ``already``: by an earlier regrade at this version; ``kept``: no answer."""


class Trained(msgspec.Struct, frozen=True, kw_only=True):
    """A training step that was paid a grade."""

    trainer: str
    step: int | None
    policy_version: int | None
    trainer_version: int | None
    reward: float | None
    role: str
    episode: str


class GradeOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """One recorded grade, before and after."""

    run_id: str
    episode: str
    dataset: str
    data_source: str
    answer: str | None
    ground_truth: str | None
    old_score: float
    new_score: float
    old_grader: str
    grader: str
    status: Status
    trained: list[Trained] = []

    @property
    def flip(self) -> Literal["to_correct", "to_wrong"] | None:
        before, after = correct(self.old_score), correct(self.new_score)
        if before == after:
            return None
        return "to_correct" if after else "to_wrong"


class SourceSummary(msgspec.Struct, kw_only=True):
    """One dataset and data source."""

    dataset: str
    data_source: str
    grades: int = 0
    correct_before: int = 0
    correct_after: int = 0
    accuracy_before: float = 0.0
    accuracy_after: float = 0.0
    to_correct: list[GradeOutcome] = []
    """Flipped 0 -> 1."""
    to_wrong: list[GradeOutcome] = []
    """Flipped 1 -> 0."""


class TrainingStep(msgspec.Struct, kw_only=True):
    """A trainer's step that was paid rewards that flipped."""

    trainer: str
    step: int | None
    policy_versions: list[int] = []
    """The policy versions of the flipped trajectories it trained on."""
    trainer_version: int | None = None
    to_correct: int = 0
    """Rewards paid as wrong that are now right."""
    to_wrong: int = 0
    """Rewards paid as right that are now wrong."""
    runs: list[str] = []


class FlipReport(msgspec.Struct, kw_only=True):
    grader: str | None
    """The grader asked for (``None``: each run's own)."""
    versions: dict[str, str] = {}
    """Grader name -> the version that graded."""
    regraded: int = 0
    already: int = 0
    kept: int = 0
    sources: list[SourceSummary] = []
    training: list[TrainingStep] = []
    skipped: dict[str, list[str]] = {}
    """Why runs gave nothing to regrade (a kind of :data:`replay.audit.plan.SKIP_KINDS`) -> their ids."""


def correct(score: float) -> bool:
    return math.isfinite(score) and score > 0


def grade_outcome(task: RegradeTask, new_score: float, status: Status, row: RunRow,
                  trained: Iterable[RolloutTrained]) -> GradeOutcome:
    """``task``'s grade with its new score, and the trainings that were paid it."""
    graded = task.graded
    return GradeOutcome(
        run_id=task.run_id, episode=graded.episode, dataset=row.dataset, data_source=row.data_source,
        answer=task.answer if task.answer is not None else graded.answer, ground_truth=task.ground_truth,
        old_score=graded.score, new_score=new_score,
        old_grader=graded.grader or graded.method, grader=task.grader, status=status,
        trained=[Trained(trainer=t.trainer, step=t.step, policy_version=t.policy_version,
                         trainer_version=t.trainer_version, reward=t.reward, role=t.role, episode=t.episode)
                 for t in paid_from(graded, trained)],
    )  # fmt: skip


def flip_report(outcomes: Sequence[GradeOutcome], *, grader: str | None, versions: dict[str, str],
                skipped: dict[str, list[str]]) -> FlipReport:
    """Summarise ``outcomes`` by dataset and source, and the training steps their flips reached."""
    sources: dict[tuple[str, str], SourceSummary] = {}
    for outcome in outcomes:
        key = (outcome.dataset, outcome.data_source)
        summary = sources.get(key) or sources.setdefault(key, SourceSummary(dataset=key[0], data_source=key[1]))
        summary.grades += 1
        summary.correct_before += correct(outcome.old_score)
        summary.correct_after += correct(outcome.new_score)
        if outcome.flip is not None:
            getattr(summary, outcome.flip).append(outcome)
    for summary in sources.values():
        summary.accuracy_before = summary.correct_before / summary.grades
        summary.accuracy_after = summary.correct_after / summary.grades
    counts = {status: sum(1 for o in outcomes if o.status == status) for status in STATUSES}
    return FlipReport(grader=grader, versions=versions, regraded=counts["regraded"], already=counts["already"],
                      kept=counts["kept"], sources=[sources[key] for key in sorted(sources)],
                      training=training_steps(outcomes), skipped={k: v for k, v in skipped.items() if v})


def training_steps(outcomes: Iterable[GradeOutcome]) -> list[TrainingStep]:
    """Each (trainer, step) paid a reward that flipped, with how many each way, in step order."""
    steps: dict[tuple[str, int | None], TrainingStep] = {}
    for outcome in outcomes:
        flip = outcome.flip
        if flip is None:
            continue
        for paid in outcome.trained:
            key = (paid.trainer, paid.step)
            step = steps.get(key) or steps.setdefault(key, TrainingStep(trainer=paid.trainer, step=paid.step,
                                                                        trainer_version=paid.trainer_version))
            # A verifier's ground-truth reward is whether it agreed with the grade: it flips too.
            setattr(step, flip, getattr(step, flip) + 1)
            if paid.policy_version is not None and paid.policy_version not in step.policy_versions:
                step.policy_versions = sorted([*step.policy_versions, paid.policy_version])
            if outcome.run_id not in step.runs:
                step.runs.append(outcome.run_id)
    return [steps[key] for key in sorted(steps, key=lambda k: (k[0], -1 if k[1] is None else k[1]))]
