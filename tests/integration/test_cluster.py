"""A 3-node JetStream cluster on loopback: losing a node mid dataset run loses no acknowledged event."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import nats.errors
import pytest

from engine.models.fake_server import FakeOpenAIServer
from engine.nats.jetstream import JetStreamEventLog
from tests.deploy.processes import assert_recorded_once, spawn_worker, submit, wait_finished, wait_pulling
from tests.support.cluster import connect_when_ready

pytestmark = [pytest.mark.nats, pytest.mark.timeout(240)]

ANSWER = "<answer>\\boxed{4}</answer>"
T = TypeVar("T")


async def test_losing_a_node_mid_run_loses_no_acknowledged_event(cluster, tmp_path: Path) -> None:
    """Kill the stream leader during a dataset run: runs finish, every event stored before is still there."""
    seed = cluster[0].url
    log = await connect_when_ready(seed)
    config = tmp_path / "worker.yaml"
    config.write_text("nats:\n  replicas: 3\n")
    workers = []
    try:
        info = await log.js.stream_info(log.stream)
        assert info.config.num_replicas == 3
        async with FakeOpenAIServer(lambda messages: ANSWER, latency_ms=300) as fake:
            workers = [
                spawn_worker(seed, tmp_path, f"w{i}", model_url=fake.base_url, concurrency=4, config=config)
                for i in range(2)
            ]
            await wait_pulling(log.js, 2)
            run_ids = [f"cluster-{i}" for i in range(20)]
            completed = await _completions(log)
            await submit(log, run_ids)
            await _until_some_completed(completed, run_ids, 2)
            before = {record.event.event_id async for record in log.read_all()}
            leader = (await log.js.stream_info(log.stream)).cluster.leader
            [victim] = [node for i, node in enumerate(cluster) if f"node{i}" == leader]
            victim.kill()
            await wait_finished(log, run_ids, timeout=150)
            after = await _retrying(lambda: _event_ids(log))
            assert before <= after
            await _retrying(lambda: assert_recorded_once(log, run_ids))
            info = await _retrying(lambda: log.js.stream_info(log.stream))
            assert info.config.num_replicas == 3
    finally:
        for worker in workers:
            worker.stop()
        await log.close()


async def _event_ids(log: JetStreamEventLog) -> set[str]:
    return {record.event.event_id async for record in log.read_all()}


async def _retrying(read: Callable[[], Awaitable[T]], attempts: int = 10) -> T:
    """This test's own reads may time out while the client fails over to a live node."""
    for _ in range(attempts - 1):
        try:
            return await read()
        except (TimeoutError, nats.errors.Error):
            await asyncio.sleep(1.0)
    return await read()


async def _completions(log: JetStreamEventLog) -> set[str]:
    """Run ids whose run.completed is published from now on, as it happens (no polling read
    that a loaded machine could starve while every run finishes)."""
    completed: set[str] = set()

    async def seen(msg) -> None:
        completed.add(msg.subject.split(".")[2])

    await log.nc.subscribe("apollo.run.*.run.completed", cb=seen)
    return completed


async def _until_some_completed(completed: set[str], run_ids: list[str], count: int) -> None:
    for _ in range(12_000):
        if len(completed) >= count:
            assert len(completed) < len(run_ids), "every run finished before the node could be killed"
            return
        await asyncio.sleep(0.01)
    raise AssertionError("no run completed")
