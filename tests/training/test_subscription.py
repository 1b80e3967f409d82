"""Grouping, heartbeats and exactly-once delivery of training batches."""

from __future__ import annotations

from collections import Counter

import pytest

from replay.training import (
    InMemoryRolloutSource,
    RolloutSubscription,
    SubscriptionOptions,
    TrainingCursor,
)
from tests.training.conftest import trajectory


class Clock:
    """A manual clock: tests move time, nothing sleeps."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _opts(**overrides):
    values = {"group_size": 2, "fetch_timeout": 0.0, "idle_timeout": 0.0, "heartbeat_interval": 0.0}
    values.update(overrides)
    return SubscriptionOptions(**values)


def _groups(*names, size=2):
    return [trajectory(g, i) for g in names for i in range(size)]


async def _drain(sub, *, commit=True):
    batches = []
    async for batch in sub:
        batches.append(batch)
        if commit:
            await batch.commit()
    return batches


async def test_batches_hold_only_complete_groups():
    """Interleaved groups come out whole, in order of completion."""
    events = [
        trajectory("a", 0),
        trajectory("b", 0),
        trajectory("b", 1),
        trajectory("c", 0),
        trajectory("a", 1),
    ]
    source = InMemoryRolloutSource(events)
    batches = await _drain(RolloutSubscription(source, _opts()))
    assert [[g.group_id for g in b.groups] for b in batches] == [["b"], ["a"]]
    assert all(len(g.rollouts) == 2 and not g.partial for b in batches for g in b.groups)
    assert source.unacked == [4]  # group c never completed: still unacknowledged


async def test_groups_per_batch_and_flush_at_idle():
    """Batches carry ``groups_per_batch`` groups; the remainder is flushed when idle."""
    source = InMemoryRolloutSource(_groups("a", "b", "c"))
    batches = await _drain(RolloutSubscription(source, _opts(groups_per_batch=2)))
    assert [len(b.groups) for b in batches] == [2, 1]
    assert source.unacked == []


async def test_nothing_is_acked_before_commit():
    """A yielded batch stays unacknowledged until the trainer commits it."""
    source = InMemoryRolloutSource(_groups("a"))
    sub = RolloutSubscription(source, _opts())
    batch = await anext(sub)
    assert source.acked == set()
    await batch.commit()
    assert source.acked == {1, 2}


async def test_killed_trainer_trains_every_trajectory_exactly_once():
    """Crash between batches (no commit), restart on the same durable: each rollout once."""
    source = InMemoryRolloutSource(_groups("a", "b", "c", "d"))
    trained: Counter[str] = Counter()
    checkpoint = TrainingCursor()

    sub = RolloutSubscription(source, _opts())
    first = await anext(sub)
    trained.update(t.event_id for t in first.trajectories)
    checkpoint = first.cursor
    await first.commit()
    second = await anext(sub)  # trained in memory, never checkpointed: lost with the crash
    assert second.number == 2
    del sub  # killed: no commit, no nak
    source.expire()  # ack_wait runs out on the server

    restarted = RolloutSubscription(
        source, _opts(), cursor=TrainingCursor.decode(checkpoint.encode())
    )
    for batch in await _drain(restarted):
        trained.update(t.event_id for t in batch.trajectories)
    assert set(trained) == {e.event_id for e in _groups("a", "b", "c", "d")}
    assert max(trained.values()) == 1
    assert source.unacked == []


async def test_lost_acks_after_checkpoint_are_not_trained_again():
    """Checkpoint saved but acks lost: redeliveries are dropped by the restored cursor."""
    source = InMemoryRolloutSource(_groups("a", "b"))
    sub = RolloutSubscription(source, _opts())
    batch = await anext(sub)
    saved = batch.cursor
    source.lose_acks = True
    await batch.commit()
    source.lose_acks = False
    source.expire()

    restarted = RolloutSubscription(source, _opts(), cursor=saved)
    again = await _drain(restarted)
    assert [g.group_id for b in again for g in b.groups] == ["b"]
    assert restarted.stats.duplicates_dropped == 2
    assert source.unacked == []


async def test_cursor_of_later_batch_covers_earlier_uncommitted_batches():
    """A checkpoint after batch 2 covers batch 1 too (batches are trained in order)."""
    source = InMemoryRolloutSource(_groups("a", "b"))
    sub = RolloutSubscription(source, _opts())
    first, second = await anext(sub), await anext(sub)
    assert set(second.cursor.committed) == {
        t.event_id for t in first.trajectories + second.trajectories
    }
    assert set(first.cursor.committed) == {t.event_id for t in first.trajectories}


async def test_redelivery_while_waiting_is_merged_not_duplicated():
    """A redelivered member of a waiting group is not counted twice."""
    clock = Clock()
    source = InMemoryRolloutSource([trajectory("a", 0)], clock=clock)
    sub = RolloutSubscription(source, _opts(), clock=clock)
    assert await _drain(sub, commit=False) == []
    source.expire()
    source.publish(trajectory("a", 1))
    batch = await anext(sub)  # the same subscription keeps following after an idle stop
    assert [r.event.sample_index for r in batch.rollouts] == [0, 1]
    assert sub.stats.redeliveries_merged == 1
    await batch.commit()
    assert source.unacked == []


async def test_waiting_groups_get_heartbeats():
    """Held deliveries get ``in_progress`` so ack_wait does not run out."""
    clock = Clock()
    source = InMemoryRolloutSource([trajectory("a", 0)], ack_wait=30.0, clock=clock)
    sub = RolloutSubscription(source, _opts(heartbeat_interval=10.0), clock=clock)
    assert await _drain(sub) == []  # the lone member is now held, waiting for its group
    clock.now = 25.0
    await sub.heartbeat()  # pushes the deadline to 55
    clock.now = 40.0
    assert await source.fetch(10, 0) == []  # not redelivered
    assert sub.stats.heartbeats >= 1
    await sub.aclose()


async def test_incomplete_group_is_skipped_after_max_wait_with_reason():
    """With ``partial_groups='skip'`` a timed-out group is acked and recorded."""
    clock = Clock()
    source = InMemoryRolloutSource([trajectory("a", 0), *_groups("b")], clock=clock)
    sub = RolloutSubscription(source, _opts(group_timeout=60.0), clock=clock)
    assert [g.group_id for b in await _drain(sub) for g in b.groups] == ["b"]
    assert 1 not in source.acked  # still waiting for its group
    clock.now = 61.0
    assert await _drain(sub) == []
    assert any(
        s.traj_uid == "traj-a-0" and "incomplete after 60.0s (1/2)" in s.reason for s in sub.skipped
    )
    assert 1 in source.acked


async def test_incomplete_group_can_be_yielded_partial():
    """With ``partial_groups='yield'`` the group comes out marked partial."""
    clock = Clock()
    source = InMemoryRolloutSource([trajectory("a", 0)], clock=clock)
    sub = RolloutSubscription(source, _opts(group_timeout=5.0, partial_groups="yield"), clock=clock)
    assert await _drain(sub) == []  # idle before the timeout: nothing yet
    clock.now = 6.0
    batches = await _drain(sub)
    assert batches[0].groups[0].partial and len(batches[0].rollouts) == 1


async def test_late_member_of_trained_group_is_skipped():
    """A trajectory arriving after its group was trained is acked and recorded."""
    source = InMemoryRolloutSource(_groups("a"))
    sub = RolloutSubscription(source, _opts())
    await _drain(sub)
    source.publish(trajectory("a", 2))
    assert await _drain(sub) == []
    assert sub.skipped[-1].reason == "arrived after its group was trained"
    assert source.unacked == []


async def test_failed_trajectories_stay_in_group_but_give_no_samples():
    """An incomplete trajectory counts for its group and is skipped by sample building."""
    events = [trajectory("a", 0), trajectory("a", 1, complete=False, done_reason="model_failed")]
    (batch,) = await _drain(RolloutSubscription(InMemoryRolloutSource(events), _opts()))
    out = batch.samples("per_turn")
    assert len(out.samples) == 1
    assert out.skipped[0].traj_uid == "traj-a-1"


async def test_staleness_is_trainer_version_minus_rollout_version():
    """Staleness compares the trainer's policy version with the trajectory's."""
    events = [trajectory("a", 0, policy_version="3"), trajectory("a", 1, policy_version="v-x")]
    sub = RolloutSubscription(InMemoryRolloutSource(events), _opts(), policy_version=5)
    (batch,) = await _drain(sub)
    assert batch.staleness_of() == {"traj-a-0": 2, "traj-a-1": None}
    assert batch.policy_version == 5


async def test_duplicate_sample_index_keeps_first_and_records_second():
    """Two trajectories for one slot: the first is trained, the second recorded."""
    dup = trajectory("a", 0, event_id="other")
    events = [trajectory("a", 0), dup, trajectory("a", 1)]
    source = InMemoryRolloutSource(events)
    sub = RolloutSubscription(source, _opts())
    (batch,) = await _drain(sub)
    assert [t.event_id for t in batch.trajectories] == ["traj-a-0", "traj-a-1"]
    assert sub.skipped[0].traj_uid == "other"
    assert source.unacked == []


async def test_non_trajectory_delivery_is_acked_and_recorded():
    """Garbage on the subject never blocks the subscription."""
    source = InMemoryRolloutSource(_groups("a"))
    source._log[99] = "not an event"  # type: ignore[assignment]
    sub = RolloutSubscription(source, _opts())
    batches = await _drain(sub)
    assert len(batches) == 1
    assert "not a trajectory.sealed event" in sub.skipped[0].reason
    assert 99 in source.acked


async def test_close_naks_uncommitted_batches_for_prompt_redelivery():
    """A graceful close hands uncommitted work back at once."""
    source = InMemoryRolloutSource(_groups("a"))
    sub = RolloutSubscription(source, _opts())
    await anext(sub)
    await sub.aclose()
    assert [d.seq for d in await source.fetch(10, 0)] == [1, 2]


async def test_cursor_prunes_below_ack_floor():
    """Entries the broker can no longer redeliver can be forgotten."""
    cursor = TrainingCursor(committed={"a": 1, "b": 5}, closed_groups={"g": 5})
    assert cursor.pruned(3).committed == {"b": 5}


@pytest.mark.parametrize("field", ["group_size", "groups_per_batch", "fetch_size"])
def test_nonpositive_sizes_are_rejected(field):
    """Sizes below one are configuration errors."""
    values = {"group_size": 2, field: 0}
    with pytest.raises(ValueError, match=">= 1"):
        SubscriptionOptions(**values)
