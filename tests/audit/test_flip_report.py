"""The flip report: accuracy before and after per dataset and source, flips, and the training
steps that were paid a reward that flipped."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from events import AnswerGraded
from events.policy import RolloutTrained
from replay.audit.flip_text import render_report
from replay.audit.flips import flip_report, grade_outcome
from replay.audit.paid import paid_from
from replay.audit.plan import RegradeTask
from replay.run_table import RunRow

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _row(run_id: str, dataset: str = "aime24", source: str = "aime24") -> RunRow:
    return RunRow(run_id=run_id, started=None, workflow="reason", model="m", dataset=dataset, data_source=source,
                  status="completed", score=None, answer=None, duration_s=None, steps=None, events=0, question="",
                  unreadable=0)


def _graded(run_id: str, score: float, answer: str = "42", episode: str = "main", branch: str | None = None
            ) -> AnswerGraded:
    return AnswerGraded(event_id=f"g-{run_id}-{episode}", run_id=run_id, occurred_at=NOW, step=1, answer=answer,
                        score=score, method="math", ground_truth="42", grader="math", grader_version="v1",
                        episode=episode, branch=branch)


def _task(graded: AnswerGraded) -> RegradeTask:
    return RegradeTask(run_id=graded.run_id, graded=graded, ground_truth="42", grader="exact", version="v2",
                       text=graded.answer)


def _trained(run_id: str, step: int, episode: str = "main", **fields: Any) -> RolloutTrained:
    values: dict[str, Any] = {"event_id": f"t-{run_id}-{step}-{episode}", "run_id": run_id, "occurred_at": NOW,
                              "trajectory_id": f"s-{run_id}", "group_id": "g", "trainer": "train-demo", "step": step,
                              "policy_version": step - 1, "trainer_version": step - 1, "reward": 1.0,
                              "episode": episode}
    values.update(fields)
    return RolloutTrained(**values)


def test_accuracy_before_and_after_per_dataset_and_source_with_flips_each_way() -> None:
    """Correct means a score above zero, as in `apollo run`; each flip lists answer and gold."""
    outcomes = [
        grade_outcome(_task(_graded("a", 1.0, "42.0")), 0.0, "regraded", _row("a"), []),
        grade_outcome(_task(_graded("b", 0.0, "42")), 1.0, "regraded", _row("b"), []),
        grade_outcome(_task(_graded("c", 1.0)), 1.0, "already", _row("c"), []),
        grade_outcome(_task(_graded("d", 1.0)), 1.0, "regraded", _row("d", "gsm8k", "gsm8k"), []),
    ]
    report = flip_report(outcomes, grader="exact", versions={"exact": "v2"}, skipped={"no_answer": ["e"]})
    assert [(s.dataset, s.grades, s.accuracy_before, s.accuracy_after) for s in report.sources] == [
        ("aime24", 3, 2 / 3, 2 / 3), ("gsm8k", 1, 1.0, 1.0)]
    aime = report.sources[0]
    assert [o.run_id for o in aime.to_wrong] == ["a"] and [o.run_id for o in aime.to_correct] == ["b"]
    assert (report.regraded, report.already, report.skipped) == (3, 1, {"no_answer": ["e"]})
    text = "\n".join(render_report(report))
    assert "a  answer '42.0'  gold '42'  (math 1 -> exact 0)" in text
    assert "flipped 0->1 (aime24 / aime24):" in text


def test_the_training_steps_paid_a_flipped_reward_are_named() -> None:
    """A flipped grade's rollout.trained records name trainer, step and policy version; a step paid
    only rewards that did not flip is not listed."""
    flipped = grade_outcome(_task(_graded("a", 1.0)), 0.0, "regraded", _row("a"), [_trained("a", 3)])
    steady = grade_outcome(_task(_graded("b", 1.0)), 1.0, "regraded", _row("b"), [_trained("b", 4)])
    report = flip_report([flipped, steady], grader="exact", versions={"exact": "v2"}, skipped={})
    assert [(t.trainer, t.step, t.policy_versions, t.to_wrong, t.runs) for t in report.training] == [
        ("train-demo", 3, [2], 1, ["a"])]
    text = "\n".join(render_report(report))
    assert "trained by train-demo at step 3 (policy v2, policy)" in text
    assert "train-demo step 3 (rollouts of policy v2): 1 paid as right, now wrong" in text


def test_only_ground_truth_rewards_of_the_grades_episode_and_its_rounds_verifiers_were_paid_from_it() -> None:
    """A vote-rewarded training never used the grade; another round's trajectory is another grade's."""
    grade = _graded("r", 0.0, episode="r1.policy")
    records = [_trained("r", 1, "r1.policy"), _trained("r", 2, "r1.verifier.0"),
               _trained("r", 3, "r1.policy", reward_source="verifier_vote"), _trained("r", 4, "r0.policy"),
               _trained("r", 5, "r0.verifier.1")]
    assert [t.step for t in paid_from(grade, records)] == [1, 2]
    assert paid_from(_graded("r", 0.0), records) == []


def test_a_flipped_answer_is_shown_as_the_model_wrote_it() -> None:
    """LaTeX in a flipped answer keeps single backslashes: the report shows ``x \\not= 42``, not
    an escaped Python literal a reader would have to decode."""
    outcome = grade_outcome(_task(_graded("a", 1.0, "x \\not= 42")), 0.0, "regraded", _row("a"), [])
    report = flip_report([outcome], grader="math", versions={"math": "v2"}, skipped={})
    text = "\n".join(render_report(report))
    assert "answer 'x \\not= 42'  gold '42'" in text
    assert "\\\\" not in text
