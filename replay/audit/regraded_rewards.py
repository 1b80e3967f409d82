"""Each sealed trajectory's reward after the latest regrade of the grade it was paid from
(what `apollo export --reward-source regraded` writes).

A policy trajectory takes the reward its ``answer.regraded`` computed under the run's reward
rule. An evolve verifier's ground-truth reward is whether it agreed with its round's policy
grade, so it flips exactly when that grade's correctness flips. A grade that read no answer
is never regraded (every grader gives it 0): its trajectory keeps its reward. Any other
trajectory whose grade was never regraded has no entry: the export skips it and says so,
rather than mixing old grades into a regraded table.
"""

from __future__ import annotations

from collections.abc import Iterable

from events.base import Event
from events.episode import AnswerGraded, AnswerRegraded, TrajectorySealed
from handlers.episode.graded_input import had_no_answer
from handlers.evolve.plan import episode_id
from replay.training.samples import Regraded


def regraded_rewards(events: Iterable[Event]) -> dict[str, Regraded]:
    """Trajectory id -> its regraded reward and score; ``events`` in stream order (the last
    regrade of a grade wins) and holding the runs' grades, regrades and trajectories."""
    latest: dict[tuple[str, str], AnswerRegraded] = {}
    unanswered: set[tuple[str, str]] = set()
    trajectories: list[TrajectorySealed] = []
    for event in events:
        if isinstance(event, AnswerRegraded):
            latest[(event.run_id, event.episode)] = event
        elif isinstance(event, AnswerGraded) and had_no_answer(event):
            unanswered.add((event.run_id, event.episode))
        elif isinstance(event, TrajectorySealed):
            trajectories.append(event)
    found: dict[str, Regraded] = {}
    for trajectory in trajectories:
        value = _regraded(trajectory, latest)
        if value is None and trajectory.role == "policy" and (trajectory.run_id, trajectory.episode) in unanswered:
            value = Regraded(reward=trajectory.reward, score=trajectory.score)
        if value is not None:
            found[trajectory.event_id] = value
    return found


def _regraded(t: TrajectorySealed, latest: dict[tuple[str, str], AnswerRegraded]) -> Regraded | None:
    if t.role == "verifier" and t.round is not None:
        policy = latest.get((t.run_id, episode_id(t.branch, t.round, "policy")))
        if policy is None:
            return None
        # handlers/evolve/sealing.py: a verifier scores 1 when its judgment matches the grade's correctness.
        agreed_before = policy.old_score >= 1.0
        score = t.score if agreed_before == (policy.new_score >= 1.0) else 1.0 - t.score
        return Regraded(reward=score, score=score)
    regrade = latest.get((t.run_id, t.episode))
    if regrade is None or regrade.reward is None:
        return None
    return Regraded(reward=regrade.reward, score=regrade.new_score)
