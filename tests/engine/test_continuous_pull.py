"""The work queue's open pull requests against a real nats-server: credit, release, restarts."""

from __future__ import annotations

import asyncio

import pytest

from engine.errors import StreamSetupError
from engine.nats import pull_consumer
from engine.nats.jetstream import JetStreamEventLog
from engine.nats.server import NatsServerProcess
from engine.testing.event_builders import submitted


async def _pull_until(queue, count: int, seconds: float) -> list:
    got: list = []
    deadline = asyncio.get_running_loop().time() + seconds
    while len(got) < count and asyncio.get_running_loop().time() < deadline:
        got += await queue.pull(count - len(got), 0.2)
    return got


async def _until_jetstream_answers(log: JetStreamEventLog) -> None:
    """After a restart the connection comes back first; the stream a moment later."""
    for _ in range(100):
        try:
            await log.nc.request(f"$JS.API.STREAM.INFO.{log.stream}", b"", timeout=0.5)
            return
        except Exception:  # noqa: BLE001 - not reconnected or not recovered yet
            await asyncio.sleep(0.1)


async def test_a_worker_is_never_sent_more_than_its_free_slots(nats_server: NatsServerProcess) -> None:
    """A worker with two free slots holds two messages; another worker gets the rest."""
    small = await JetStreamEventLog.connect(nats_server.url)
    large = await JetStreamEventLog.connect(nats_server.url)
    try:
        small_queue = await small.work_queue("apollo-workers")
        large_queue = await large.work_queue("apollo-workers")
        assert await small_queue.pull(2, 0.2) == []  # opens credit for two
        for index in range(10):
            await small.append(submitted(f"r-credit-{index}"))
        first = await _pull_until(small_queue, 2, 5.0)
        rest = await _pull_until(large_queue, 8, 5.0)
        assert len(first) == 2 and len(rest) == 8
        assert {d.seq for d in first}.isdisjoint({d.seq for d in rest})
        assert small_queue.puller.open_credit == 0
    finally:
        await small.close()
        await large.close()


async def test_messages_received_but_not_handed_out_are_redelivered_at_once_on_close(
    nats_server: NatsServerProcess,
) -> None:
    """Closing a worker gives back what it holds, long before the 60 s ack wait."""
    holder = await JetStreamEventLog.connect(nats_server.url)
    other = await JetStreamEventLog.connect(nats_server.url)
    holder_queue = await holder.work_queue("apollo-workers")
    assert await holder_queue.pull(5, 0.2) == []  # credit for five, nothing taken yet
    for index in range(3):
        await holder.append(submitted(f"r-release-{index}"))
    for _ in range(50):
        if holder_queue.puller.held == 3:
            break
        await asyncio.sleep(0.05)
    await holder.close()
    try:
        other_queue = await other.work_queue("apollo-workers")
        again = await _pull_until(other_queue, 3, 5.0)
        assert sorted(d.event.run_id for d in again) == [f"r-release-{i}" for i in range(3)]
    finally:
        await other.close()


async def test_messages_held_too_long_beyond_capacity_go_back_to_other_workers(
    nats_server: NatsServerProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held messages the worker has no room for are released, not left to the ack wait."""
    monkeypatch.setattr(pull_consumer, "STALE_AFTER_S", 0.2)
    busy = await JetStreamEventLog.connect(nats_server.url)
    idle = await JetStreamEventLog.connect(nats_server.url)
    try:
        busy_queue = await busy.work_queue("apollo-workers")
        assert await busy_queue.pull(3, 0.2) == []
        for index in range(3):
            await busy.append(submitted(f"r-stale-{index}"))
        for _ in range(50):
            if busy_queue.puller.held == 3:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        [kept] = await busy_queue.pull(1, 0.2)  # room for one only now
        released = await _pull_until(await idle.work_queue("apollo-workers"), 2, 5.0)
        assert len(released) == 2 and all(d.deliveries == 2 for d in released)
        assert kept.seq not in {d.seq for d in released}
    finally:
        await busy.close()
        await idle.close()


async def test_pulling_resumes_after_the_server_restarts(nats_server: NatsServerProcess) -> None:
    """Open requests die with the server; the worker asks again and gets new events."""
    log = await JetStreamEventLog.connect(nats_server.url)
    try:
        queue = await log.work_queue("apollo-workers")
        assert await queue.pull(4, 0.2) == []
        nats_server.stop()
        nats_server.start()
        await _until_jetstream_answers(log)
        await log.append(submitted("r-after-restart"))
        [delivery] = await _pull_until(queue, 1, 15.0)
        assert delivery.event.run_id == "r-after-restart"
        await delivery.ack()
    finally:
        await log.close()


async def test_a_missing_consumer_is_a_clear_error(jetstream_log: JetStreamEventLog) -> None:
    """Asking for a work queue on a missing consumer raises a setup error naming it."""
    with pytest.raises(StreamSetupError, match="no-such-consumer"):
        await jetstream_log.work_queue("no-such-consumer")
