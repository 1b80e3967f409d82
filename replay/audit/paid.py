"""Which training steps were paid a grade: the ``rollout.trained`` records tied to it."""

from __future__ import annotations

from collections.abc import Iterable

from events.episode import AnswerGraded
from events.policy import RolloutTrained
from handlers.evolve.plan import parse_episode

GRADED_SOURCE = "ground_truth"
"""The reward source that pays the grade; a verifier vote does not depend on it."""


def paid_from(graded: AnswerGraded, trained: Iterable[RolloutTrained]) -> list[RolloutTrained]:
    """The trainings whose reward came from ``graded``: its own episode's trajectory and, in an
    evolve round, the round's verifier trajectories (their ground-truth reward is whether
    they agreed with this grade)."""
    ref = parse_episode(graded.branch, graded.episode)

    def tied(record: RolloutTrained) -> bool:
        if record.reward_source != GRADED_SOURCE:
            return False
        if record.episode == graded.episode:
            return True
        other = parse_episode(graded.branch, record.episode) if ref is not None else None
        return other is not None and ref is not None and other.kind == "verifier" and other.round == ref.round

    return [record for record in trained if tied(record)]
