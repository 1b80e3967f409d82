"""Grades name their grader, and logs written before that still decode."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from events import AnswerGraded, AnswerRegraded, TrajectorySealed, decode, encode
from events.policy import RolloutTrained

ENVELOPE = {"event_id": "e1", "run_id": "r1", "occurred_at": "2026-01-02T03:04:05Z", "schema_version": 1}


def test_a_grade_recorded_before_graders_were_named_decodes_with_blank_grader() -> None:
    """An old answer.graded has no grader fields: they read as blank, nothing else changes."""
    raw = {"type": "answer.graded", **ENVELOPE, "step": 2, "answer": "5", "score": 1.0, "method": "math"}
    event = decode(json.dumps(raw))
    assert isinstance(event, AnswerGraded)
    assert (event.grader, event.grader_version, event.score) == ("", "", 1.0)


def test_an_old_sealed_trajectory_decodes_with_blank_grader() -> None:
    """A sealed trajectory recorded before grader fields existed decodes with a blank grader."""
    raw = {"type": "trajectory.sealed", **ENVELOPE, "problem_id": "p", "group_id": "g", "sample_index": 0,
           "data_source": "d", "turns": [], "reward": 1.0, "score": 1.0, "done_reason": "answer",
           "invalid_turns": 0, "model": "m"}
    event = decode(json.dumps(raw))
    assert isinstance(event, TrajectorySealed)
    assert (event.grader, event.grader_version) == ("", "")


def test_audit_events_round_trip() -> None:
    """answer.regraded and rollout.trained are part of the vocabulary."""
    now = datetime(2026, 1, 2, tzinfo=UTC)
    regraded = AnswerRegraded(event_id="x", run_id="r1", occurred_at=now, regraded_id="g1", answer="5.0",
                              ground_truth="5", old_score=1.0, new_score=0.0, reward=0.0, grader="exact",
                              grader_version="abc", method="exact")
    trained = RolloutTrained(event_id="y", run_id="r1", occurred_at=now, trajectory_id="t1", group_id="g",
                             trainer="train-demo", step=3, policy_version=2, trainer_version=2, reward=1.0)
    for event in (regraded, trained):
        assert decode(encode(event)) == event
