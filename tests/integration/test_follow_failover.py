"""Following a run on a 3-node cluster while the node that holds the follow's consumer is SIGKILLed."""

from __future__ import annotations

import asyncio

import pytest

from engine.nats.jetstream import JetStreamEventLog
from engine.nats.server import NatsServerProcess
from engine.nats.transient import retrying
from engine.testing.event_builders import started, submitted
from events.subjects import run_filter
from tests.support.cluster import cluster_url, connect_when_ready, node_named

pytestmark = [pytest.mark.nats, pytest.mark.slow, pytest.mark.timeout(240)]

WAIT_S = 90.0
"""A guard against a hang only: an election and a consumer made again take seconds."""


async def _consumer_host(log: JetStreamEventLog, run_id: str) -> str:
    """The server that holds the ordered consumer following ``run_id``."""
    infos = await log.js.consumers_info(log.stream)
    [info] = [info for info in infos if info.config.filter_subject == run_filter(run_id)]
    assert info.cluster is not None
    assert info.cluster.leader is not None
    return info.cluster.leader


async def _take(following, count: int) -> list:
    async def take() -> list:
        return [await anext(following) for _ in range(count)]

    return await asyncio.wait_for(take(), WAIT_S)


@pytest.mark.parametrize("killed", ["the consumer's node", "the follower's node"])
async def test_a_follow_loses_and_repeats_nothing_when_a_node_it_uses_is_killed(
    cluster: list[NatsServerProcess], killed: str,
) -> None:
    """SIGKILL the node holding the follow's consumer, or its client's node: every event arrives once, in order."""
    url = cluster_url(cluster)
    writer = await connect_when_ready(url)
    follower_node = cluster[0]
    follower = await JetStreamEventLog.connect(follower_node.url, manage_streams=False)  # learns the others
    following = follower.follow("r-fo")
    try:
        before = [submitted("r-fo"), started("r-fo")]
        for event in before:
            await writer.append(event)
        assert [r.event for r in await _take(following, 1)] == before[:1]  # the consumer exists now
        victim = node_named(cluster, await _consumer_host(writer, "r-fo")) if killed == "the consumer's node" \
            else follower_node
        victim.kill()  # the follower reconnects, or nats-py misses the consumer's heartbeats: either way a new one
        after = [started("r-fo") for _ in range(3)]
        for event in after:
            await retrying(lambda event=event: writer.append(event), doing="append through the failover")
        assert [r.event for r in await _take(following, 4)] == [*before[1:], *after]
        victim.start()
    finally:
        await following.aclose()
        await follower.close()
        await writer.close()
