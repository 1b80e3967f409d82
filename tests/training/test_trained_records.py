"""A committed batch says what was trained: every trajectory is handed to ``on_commit`` first."""

from __future__ import annotations

import pytest

from engine.eventlog.memory import InMemoryEventLog
from engine.rollouts import train_recorder
from events.policy import RolloutTrained
from replay.training import InMemoryRolloutSource, RolloutSubscription, SubscriptionOptions, Trained
from tests.training.conftest import trajectory, turn

OPTIONS = SubscriptionOptions(group_size=2, fetch_timeout=0.0, idle_timeout=0.0, heartbeat_interval=0.0)


def _group() -> list:
    return [trajectory("a", 0, reward=1.0, turns=[turn(1, policy_version=3)], policy_versions=[3]),
            trajectory("a", 1, reward=0.0, turns=[turn(1, policy_version=4)], policy_versions=[4])]


async def test_commit_hands_every_trajectory_with_its_step_versions_and_reward() -> None:
    """The trainer's step, each trajectory's oldest version, the trainer's version, the reward paid."""
    seen: list[Trained] = []

    async def record(trained: list[Trained]) -> None:
        seen.extend(trained)

    source = InMemoryRolloutSource(_group())
    sub = RolloutSubscription(source, OPTIONS, policy_version=4, on_commit=record)
    batch = await anext(sub)
    assert seen == []
    await batch.commit(step=12)
    assert [(t.event.event_id, t.step, t.version, t.trainer_version, t.reward) for t in seen] == [
        ("traj-a-0", 12, 3, 4, 1.0), ("traj-a-1", 12, 4, 4, 0.0)]
    assert source.acked == {1, 2}


async def test_a_commit_whose_record_fails_acknowledges_nothing_and_can_be_retried() -> None:
    """Nothing is acknowledged without its record; the retried commit records and acknowledges."""
    calls = 0

    async def flaky(trained: list[Trained]) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ConnectionError("the log is down")

    source = InMemoryRolloutSource(_group())
    sub = RolloutSubscription(source, OPTIONS, on_commit=flaky)
    batch = await anext(sub)
    with pytest.raises(ConnectionError):
        await batch.commit(step=1)
    assert (source.acked, batch.committed, sub.stats.train_record_failures) == (set(), False, 2)
    await batch.commit(step=1)
    assert source.acked == {1, 2} and batch.committed


async def test_the_recorder_appends_rollout_trained_to_each_trajectorys_run_once() -> None:
    """``rollout.trained`` lands on the trajectory's own run; a retried commit adds nothing."""
    log = InMemoryEventLog()
    record = train_recorder(log, trainer="demo")
    items = [Trained(event=t, step=5, version=3, trainer_version=4, reward=t.reward, reward_source="ground_truth")
             for t in _group()]
    await record(items)
    await record(items)
    stored = [r.event async for r in log.read_all()]
    assert [(e.run_id, e.trajectory_id, e.trainer, e.step) for e in stored] == [
        ("run-a-0", "traj-a-0", "demo", 5), ("run-a-1", "traj-a-1", "demo", 5)]
    assert all(isinstance(e, RolloutTrained) and e.causation_id == e.trajectory_id for e in stored)
