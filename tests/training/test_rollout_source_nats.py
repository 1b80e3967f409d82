"""The JetStream rollout source against a real nats-server."""

from __future__ import annotations

from collections import Counter

import pytest

from engine.nats.rollout_source import JetStreamRolloutSource
from events.subjects import subject_for_tag
from replay.training import RolloutSubscription, SubscriptionOptions, TrainingCursor
from tests.training.conftest import trajectory

pytestmark = pytest.mark.nats


def _opts(idle: float) -> SubscriptionOptions:
    return SubscriptionOptions(
        group_size=2, fetch_timeout=0.2, idle_timeout=idle, heartbeat_interval=0.5
    )


async def test_trainer_killed_mid_stream_trains_each_rollout_once(jetstream_log):
    """Kill after an uncommitted batch; a new trainer on the durable trains the rest once."""
    events = [trajectory(g, i) for g in ("a", "b", "c") for i in range(2)]
    for event in events:
        await jetstream_log.append(event)
    trained: Counter[str] = Counter()

    source = await JetStreamRolloutSource.create(
        jetstream_log.js, durable="trainer-t", ack_wait=1.0
    )
    sub = RolloutSubscription(source, _opts(idle=1.0))
    first = await anext(sub)
    trained.update(t.event_id for t in first.trajectories)
    checkpoint = first.cursor.encode()
    await first.commit()
    await anext(sub)  # trained but never checkpointed; the trainer dies here
    sub._closed = True  # stop its heartbeats the way a dead process would
    if sub._heartbeat_task is not None:
        sub._heartbeat_task.cancel()
    await source.close()

    source2 = await JetStreamRolloutSource.create(
        jetstream_log.js, durable="trainer-t", ack_wait=1.0
    )
    sub2 = RolloutSubscription(source2, _opts(idle=3.0), cursor=TrainingCursor.decode(checkpoint))
    async for batch in sub2:
        trained.update(t.event_id for t in batch.trajectories)
        await batch.commit()
    await sub2.aclose()
    assert set(trained) == {e.event_id for e in events}
    assert max(trained.values()) == 1
    assert await source2.ack_floor() >= 1


async def test_garbage_on_the_subject_is_terminated_and_recorded(jetstream_log):
    """Undecodable messages are terminated, never handed to the trainer."""
    await jetstream_log.append_raw(subject_for_tag("r-bad", "trajectory.sealed"), b"{not json")
    for i in range(2):
        await jetstream_log.append(trajectory("a", i))
    source = await JetStreamRolloutSource.create(jetstream_log.js, durable="trainer-g")
    sub = RolloutSubscription(source, _opts(idle=0.5))
    batches = [b async for b in sub]
    assert [len(b) for b in batches] == [2]
    assert len(source.rejected) == 1 and "undecodable" in source.rejected[0][1]
    await sub.aclose()
