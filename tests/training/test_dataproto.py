"""Collation into verl's DataProto and verl's GRPO advantage on it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from replay.training.dataproto import collate
from replay.training.samples import build_many
from replay.training.tokens import tokenize_sample
from tests.training.conftest import trajectory, turn


def _recorded(step, prompt, response, **fields):
    return turn(step, "x", prompt_token_ids=prompt, response_token_ids=response, **fields)


def _group():
    return [
        trajectory(
            "g1", 0, reward=1.0, turns=[_recorded(1, [1, 2], [3, 4, 5]), _recorded(2, [6], [7])]
        ),
        trajectory("g1", 1, reward=0.0, turns=[_recorded(1, [1, 2, 3], [4], valid=False)]),
        trajectory("g2", 0, reward=1.0, turns=[_recorded(1, [9], [8, 8])]),
    ]


def _batch():
    samples = build_many(_group(), "per_turn").samples
    return collate(
        [tokenize_sample(s, None) for s in samples], pad_token_id=0, staleness=[1, 1, 0, 2]
    )


def test_prompts_are_left_padded_and_responses_right_padded():
    """Padding puts prompt and response next to each other; masks mark real tokens."""
    data = _batch()
    assert data.batch["prompts"].tolist()[0] == [0, 1, 2]
    assert data.batch["responses"].tolist()[0] == [3, 4, 5]
    assert data.batch["responses"].tolist()[1] == [7, 0, 0]
    assert data.batch["input_ids"].tolist()[1] == [0, 0, 6, 7, 0, 0]
    assert data.batch["attention_mask"].tolist()[1] == [0, 0, 1, 1, 0, 0]
    assert data.batch["position_ids"].tolist()[1] == [0, 0, 0, 1, 1, 1]
    assert data.batch["response_mask"].tolist()[1] == [1, 0, 0]
    assert torch.equal(data.batch["response_mask"], data.batch["attention_mask"][:, -3:])


def test_scores_sit_on_last_response_token():
    """Token-level scores hold the outcome (minus penalties) at each row's last token."""
    scores = _batch().batch["token_level_scores"]
    assert scores.tolist()[0] == [0.0, 0.0, 1.0]
    assert scores.tolist()[1] == [1.0, 0.0, 0.0]
    assert scores[2, 0].item() == pytest.approx(-0.1)


def test_non_tensor_fields_describe_each_row():
    """uid groups rows; trajectory metadata rides along as numpy arrays."""
    nt = _batch().non_tensor_batch
    assert list(nt["uid"]) == ["g1", "g1", "g1", "g2"]
    assert list(nt["traj_uid"]) == ["traj-g1-0", "traj-g1-0", "traj-g1-1", "traj-g2-0"]
    assert nt["is_action_valid"].tolist() == [True, True, False, True]
    assert nt["episode_rewards"].tolist() == [1.0, 1.0, 0.0, 1.0]
    assert nt["episode_lengths"].tolist() == [2, 2, 1, 1]
    assert list(nt["staleness"]) == [1, 1, 0, 2]
    for key in ("data_source", "tool_callings", "index", "policy_version"):
        assert isinstance(nt[key], np.ndarray) and len(nt[key]) == 4


def test_verl_grpo_advantage_runs_on_the_batch():
    """verl's GRPO estimator normalises within each uid over all step-samples."""
    from verl.trainer.ppo import core_algos

    data = _batch()
    adv, _ = core_algos.compute_grpo_outcome_advantage(
        token_level_rewards=data.batch["token_level_scores"],
        response_mask=data.batch["response_mask"],
        index=data.non_tensor_batch["uid"],
    )
    g1 = torch.tensor([1.0, 1.0, 0.9])
    expected = (g1 - g1.mean()) / (g1.std() + 1e-6)
    assert adv[0, 0].item() == pytest.approx(expected[0].item(), rel=1e-4)
    assert adv[2, 0].item() == pytest.approx(expected[2].item(), rel=1e-4)
    assert adv[1, 1:].abs().sum().item() == 0.0  # padding gets no advantage
    assert adv[3].tolist() == pytest.approx([1.0, 1.0, 0.0])  # lone sample: mean 0, std 1


def test_rollout_logprobs_are_included_when_every_row_has_them():
    """Recorded logprobs become ``rollout_log_probs``."""
    turns = [
        turn(
            1, "x", prompt_token_ids=[1], response_token_ids=[2, 3], response_logprobs=[-0.5, -0.25]
        )
    ]
    samples = build_many([trajectory(turns=turns)], "per_turn").samples
    data = collate([tokenize_sample(s, None) for s in samples])
    assert data.batch["rollout_log_probs"].tolist() == [[-0.5, -0.25]]


def test_empty_response_reward_goes_to_last_column():
    """A sample with no response tokens still contributes its score (as verl does)."""
    t = trajectory(reward=1.0, turns=[turn(1, "", prompt_token_ids=[1], response_token_ids=[])])
    data = collate([tokenize_sample(s, None) for s in build_many([t], "per_turn").samples])
    assert data.batch["token_level_scores"].tolist() == [[1.0]]
    assert data.batch["response_mask"].tolist() == [[0]]


def test_zero_samples_is_a_clear_error():
    """Collating nothing raises instead of building an empty batch."""
    with pytest.raises(ValueError, match="zero samples"):
        collate([])


def test_pad_to_smaller_than_row_is_rejected():
    """A fixed pad size shorter than a row is reported."""
    samples = build_many(_group(), "per_turn").samples
    with pytest.raises(ValueError, match="exceeds pad_to"):
        collate([tokenize_sample(s, None) for s in samples], pad_to=(1, 1))
