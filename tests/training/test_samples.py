"""Sample layouts built from sealed trajectories."""

from __future__ import annotations

import pytest

from replay.training.samples import SampleOptions, build_many, build_samples
from tests.training.conftest import trajectory, turn


def _two_turns(valid_first: bool = True):
    return trajectory(
        reward=1.0,
        turns=[
            turn(1, "python print 1 + 1", valid=valid_first, observation="output 2", tool="python"),
            turn(2, "the answer is 2"),
        ],
    )


def test_per_turn_gives_one_sample_per_turn_with_outcome_reward():
    """Every turn becomes a sample carrying the trajectory's outcome reward."""
    out = build_samples(_two_turns(), "per_turn")
    assert [s.step for s in out.samples] == [1, 2]
    assert [s.reward for s in out.samples] == [1.0, 1.0]
    assert out.samples[0].response_text == "python print 1 + 1"
    assert out.samples[0].prompt[1].content.endswith("step 1")
    assert all(s.uid == "g1" and s.episode_length == 2 for s in out.samples)
    assert out.samples[0].tool_callings == 1
    assert not out.skipped


def test_invalid_turn_penalty_lands_on_that_turn_only():
    """An invalid turn loses 0.1; the other turns keep the full outcome."""
    out = build_samples(_two_turns(valid_first=False), "per_turn")
    assert out.samples[0].reward == pytest.approx(0.9)
    assert out.samples[0].is_action_valid is False
    assert out.samples[1].reward == 1.0


def test_invalid_turn_penalty_is_configurable():
    """The penalty comes from the options."""
    out = build_samples(_two_turns(False), "per_turn", SampleOptions(invalid_turn_penalty=0.5))
    assert out.samples[0].reward == pytest.approx(0.5)


def test_multi_turn_alternates_replies_and_observations():
    """One chat sample: replies trained, observations not, the trailing observation dropped."""
    t = trajectory(
        turns=[
            turn(1, "python a", observation="output 1", tool="python"),
            turn(2, "python b", observation="output 2", tool="python", valid=False),
            turn(3, "python c", observation="never answered"),
        ]
    )
    (sample,) = build_samples(t, "multi_turn").samples
    assert [(s.role, s.trained) for s in sample.response] == [
        ("assistant", True), ("user", False), ("assistant", True), ("user", False),
        ("assistant", True),
    ]  # fmt: skip
    assert [s.penalty for s in sample.response if s.trained] == [0.0, 0.1, 0.0]
    assert sample.is_action_valid is False
    assert sample.step is None
    assert sample.prompt == t.turns[0].prompt


def test_observation_role_can_be_tool():
    """Observations may be rendered as ``tool`` messages."""
    t = trajectory(turns=[turn(1, "x", observation="o"), turn(2, "y")])
    (sample,) = build_samples(t, "multi_turn", SampleOptions(observation_role="tool")).samples
    assert sample.response[1].role == "tool"


def test_sft_keeps_only_correct_trajectories_and_valid_turns():
    """Wrong trajectories and invalid turns are left out with a reason."""
    good = trajectory("g1", 0, reward=1.0, turns=[turn(1, "bad", valid=False), turn(2, "ok")])
    wrong = trajectory("g1", 1, reward=0.0)
    out = build_many([good, wrong], "sft")
    assert [s.response_text for s in out.samples] == ["ok"]
    reasons = sorted(s.reason for s in out.skipped)
    assert reasons[0] == "invalid turn left out of sft"
    assert reasons[1].startswith("not correct for sft")


@pytest.mark.parametrize("layout", ["per_turn", "multi_turn", "sft"])
def test_incomplete_and_empty_trajectories_are_skipped_with_reason(layout):
    """``complete=False`` and turn-less trajectories give no samples and a recorded reason."""
    failed = trajectory("g1", 0, complete=False, done_reason="model_failed")
    empty = trajectory("g1", 1, turns=[])
    out = build_many([failed, empty], layout)
    assert out.samples == []
    assert [s.traj_uid for s in out.skipped] == ["traj-g1-0", "traj-g1-1"]
    assert "model_failed" in out.skipped[0].reason
    assert "no turns" in out.skipped[1].reason


def test_unknown_layout_is_rejected():
    """A layout name that does not exist raises a clear error."""
    with pytest.raises(ValueError, match="unknown layout"):
        build_samples(trajectory(), "pairwise")
