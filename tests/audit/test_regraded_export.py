"""Exports rewarded by the latest regrade: rows never regraded are skipped and named."""

from __future__ import annotations

import pytest

from replay.training import SubscriptionOptions
from replay.training.samples import Regraded, SampleOptions, build_many
from tests.training.conftest import trajectory


def test_regraded_rows_take_the_new_reward_and_score_and_the_rest_are_skipped_with_the_command() -> None:
    """Regraded rows export the new reward and score; never-regraded ones are skipped naming the regrade command."""
    regraded, never = trajectory("g", 0, reward=1.0), trajectory("g", 1, reward=1.0)
    options = SampleOptions(reward_source="regraded", regraded={regraded.event_id: Regraded(reward=0.0, score=0.0)})
    built = build_many([regraded, never], "multi_turn", options)
    [sample] = built.samples
    assert (sample.traj_uid, sample.outcome_reward, sample.score, sample.reward_source) == (
        regraded.event_id, 0.0, 0.0, "regraded")
    [skipped] = built.skipped
    assert skipped.traj_uid == never.event_id
    assert skipped.reason.startswith(f"never regraded (run `apollo regrade {never.run_id}` first")


def test_a_trainer_cannot_ask_for_regraded_rewards_on_the_live_stream() -> None:
    """Asking for regraded rewards on the live subscription stream is refused as export-only."""
    with pytest.raises(ValueError, match="'regraded' is for exports"):
        SubscriptionOptions(group_size=2, reward_source="regraded")
