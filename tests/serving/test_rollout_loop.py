"""The loop on the log: versioned groups submitted with backpressure, weights synced, stale groups discarded.

Real nats-server, real workers (the dispatcher with the routing table), the fake vLLM
server behind the real model client, the JetStream rollout source under the subscription.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from engine.datasets import Problem
from engine.models.fake_server import FakeOpenAIServer
from engine.models.router import ModelRouter
from engine.nats.rollout_source import JetStreamRolloutSource
from engine.rollouts import DriverOptions, RolloutDriver, discard_recorder, train_recorder
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.serving import ActivePolicies, PolicySync, VllmLoraLoader, announce_update, wait_for_outcome
from engine.testing.harness import make_settings, services
from events.episode import TrajectorySealed
from events.model import ModelResponded
from events.policy import PolicyActivated, RolloutDiscarded, RolloutTrained
from events.run import ProblemSubmitted
from handlers.routes import ROUTES
from replay.training import RolloutSubscription, SubscriptionOptions

pytestmark = pytest.mark.nats


def _problems(n: int, start: int = 0) -> list[Problem]:
    return [Problem(problem_id=f"p{i}", question=f"What is {i} + 2 - {i}?", ground_truth="2", data_source="toy")
            for i in range(start, start + n)]


@pytest.fixture
async def engine(jetstream_log: Any, vllm: FakeOpenAIServer) -> AsyncIterator[ActivePolicies]:
    """Workers and a serving-side sync over the log; yields the process's version registry."""
    registry = ActivePolicies()
    settings = make_settings({"models": {"policy": {"base_url": vllm.base_url, "model": "base"}}})
    dispatcher = Dispatcher(jetstream_log, ROUTES, services(settings, models=ModelRouter(policies=registry)),
                            DispatcherSettings(pull_timeout=0.1, backoff_base=0.0))
    sync = PolicySync(jetstream_log, VllmLoraLoader(vllm.base_url), endpoint=vllm.base_url, registry=registry,
                      poll_interval=0.05)
    tasks = [asyncio.create_task(dispatcher.run()), asyncio.create_task(sync.run())]
    try:
        yield registry
    finally:
        dispatcher.stop()
        sync.stop()
        await asyncio.wait_for(asyncio.gather(*tasks), 30)


async def _activate(log: Any, checkpoints: Path, version: int) -> None:
    update = await announce_update(log, version=version, checkpoint=str(checkpoints / f"step-{version}"),
                                   adapter="apollo")
    assert isinstance(await wait_for_outcome(log, update, timeout=30), PolicyActivated)


async def _events(log: Any) -> list[Any]:
    return [record async for record in log.read_all()]


async def test_groups_are_submitted_with_backpressure_and_carry_the_served_version(
    jetstream_log: Any, vllm: FakeOpenAIServer, checkpoints: Path, engine: ActivePolicies
) -> None:
    """Rollout groups are submitted within the in-flight bound and carry the served policy version."""
    await _activate(jetstream_log, checkpoints, 1)
    driver = RolloutDriver(jetstream_log, DriverOptions(samples=2, max_in_flight=2, run_prefix="bp",
                                                        poll_interval=0.05))
    groups = await driver.submit(_problems(5))
    await driver.drain()

    assert [g.version for g in groups] == [1] * 5
    assert driver.stats.groups_done == 5 and driver.stats.max_open_groups == 2
    # From the log alone: no submission found more than two groups open.
    records = await _events(jetstream_log)
    group_of = {r.event.run_id: r.event.group_id for r in records if isinstance(r.event, ProblemSubmitted)}
    open_runs: dict[str, set[str]] = {}
    for record in records:
        event = record.event
        if isinstance(event, ProblemSubmitted):
            open_runs.setdefault(event.group_id or "", set()).add(event.run_id)
            assert len([g for g, runs in open_runs.items() if runs]) <= 2
        elif type(event).__name__ in ("RunCompleted", "RunFailed") and event.run_id in group_of:
            open_runs[group_of[event.run_id]].discard(event.run_id)
    sealed = [r.event for r in records if isinstance(r.event, TrajectorySealed)]
    assert len(sealed) == 10
    assert {tuple(t.policy_versions) for t in sealed} == {(1,)}
    assert {r.event.metadata["policy_version"] for r in records if isinstance(r.event, ProblemSubmitted)} == {1}
    assert {r.event.model for r in records if isinstance(r.event, ModelResponded)} == {"apollo-v1"}


async def test_the_trainer_trains_fresh_groups_and_records_the_stale_ones(
    jetstream_log: Any, vllm: FakeOpenAIServer, checkpoints: Path, engine: ActivePolicies
) -> None:
    """The trainer trains groups from the current policy and records stale ones as discarded."""
    await _activate(jetstream_log, checkpoints, 1)
    driver = RolloutDriver(jetstream_log, DriverOptions(samples=2, max_in_flight=4, run_prefix="st",
                                                        poll_interval=0.05))
    await driver.submit(_problems(2))
    await driver.drain()
    await _activate(jetstream_log, checkpoints, 2)
    await driver.submit(_problems(1, start=2))
    await driver.drain()
    assert [g.version for g in driver.groups] == [1, 1, 2]

    source = await JetStreamRolloutSource.create(jetstream_log.js, durable="trainer-st", ack_wait=30)
    options = SubscriptionOptions(group_size=2, groups_per_batch=4, fetch_timeout=0.2, idle_timeout=1.0,
                                  heartbeat_interval=0.5, max_staleness=0)
    sub = RolloutSubscription(source, options, policy_version=2, on_discard=discard_recorder(jetstream_log),
                              on_commit=train_recorder(jetstream_log, trainer="trainer-st"))
    trained = []
    async for batch in sub:
        trained += [g.group_id for g in batch.groups]
        await batch.commit(step=3)
    await sub.aclose()
    await source.close()

    assert trained == [driver.groups[2].group_id]
    discarded = [r.event for r in await _events(jetstream_log) if isinstance(r.event, RolloutDiscarded)]
    assert sorted(d.group_id for d in discarded) == sorted([driver.groups[0].group_id] * 2 +
                                                          [driver.groups[1].group_id] * 2)
    assert {(d.policy_version, d.trainer_version) for d in discarded} == {(1, 2)}
    assert all(d.run_id in driver.groups[0].run_ids + driver.groups[1].run_ids for d in discarded)
    recorded = [r.event for r in await _events(jetstream_log) if isinstance(r.event, RolloutTrained)]
    assert sorted(t.run_id for t in recorded) == sorted(driver.groups[2].run_ids)
    assert {(t.trainer, t.step, t.policy_version, t.trainer_version) for t in recorded} == {("trainer-st", 3, 2, 2)}
    assert await source.ack_floor() > 0


@pytest.mark.parametrize(
    ("fields", "message"),
    [({"samples": 0}, "samples"), ({"max_in_flight": -1}, "max_in_flight"), ({"samples": True}, "samples"),
     ({"run_prefix": "a.b"}, "run prefix"), ({"policy": "x y"}, "policy name")],
)
def test_garbage_driver_options_are_refused(fields: dict[str, Any], message: str) -> None:
    """Invalid rollout driver options are refused with a reason."""
    values: dict[str, Any] = {"samples": 2, "max_in_flight": 1}
    values.update(fields)
    with pytest.raises(ValueError, match=message):
        DriverOptions(**values)
