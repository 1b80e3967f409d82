"""A short ack wait kept alive by heartbeats: live workers keep their events, dead ones lose them fast."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from engine.config.settings import NatsSettings
from engine.nats.jetstream import JetStreamEventLog
from engine.nats.streams import Definitions
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.testing.event_builders import submitted
from events import ProblemSubmitted, RunStarted
from events.base import Event
from handlers.context import HandlerContext, Services
from handlers.routes import Route

pytestmark = pytest.mark.nats

ACK_WAIT = 1.0
"""Seconds; the tests' handlers outlast it several times over."""


class Effect:
    """Starts each run after ``seconds``; notes every delivery it was given."""

    def __init__(self, seconds: float, *, hang: asyncio.Event | None = None) -> None:
        self.seconds = seconds
        self.hang = hang
        self.calls: list[str] = []

    async def start(self, event: ProblemSubmitted, ctx: HandlerContext) -> Sequence[Event]:
        self.calls.append(event.run_id)
        if self.hang is not None:
            await self.hang.wait()  # a worker stuck here until the test lets it go
        await asyncio.sleep(self.seconds)
        return [ctx.new(RunStarted, "result", workflow="reason")]

    def routes(self, kind: str = "effect") -> list[Route]:
        return [Route(ProblemSubmitted, self.start, kind, "start")]


def _dispatcher(log: JetStreamEventLog, effect: Effect, kind: str = "effect") -> Dispatcher:
    return Dispatcher(log, effect.routes(kind), Services(), DispatcherSettings(
        pull_timeout=0.1, heartbeat=ACK_WAIT / 3, backoff_base=0.1))


async def _started(log: JetStreamEventLog, run_id: str) -> None:
    for _ in range(600):
        if any(isinstance(r.event, RunStarted) for r in await log.read_run(run_id)):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{run_id} was not started")


@pytest.mark.parametrize("kind", ["effect", "decide"])
async def test_a_handler_outlasting_the_ack_wait_keeps_its_event_while_its_worker_lives(nats_server, kind) -> None:
    """Heartbeats every third of the ack wait, for deciders too: no redelivery, the handler runs once."""
    log = await JetStreamEventLog.connect(nats_server.url, ack_wait=ACK_WAIT)
    effect = Effect(4 * ACK_WAIT)
    other_effect = Effect(4 * ACK_WAIT)
    workers = [_dispatcher(log, effect, kind)]
    other = await JetStreamEventLog.connect(nats_server.url, ack_wait=ACK_WAIT)
    workers.append(_dispatcher(other, other_effect, kind))  # would take the event if it came back
    tasks = [asyncio.create_task(worker.run()) for worker in workers]
    try:
        await log.append(submitted("r-slow"))
        await asyncio.wait_for(_started(log, "r-slow"), 30)
    finally:
        for worker in workers:
            worker.stop()
        await asyncio.wait_for(asyncio.gather(*tasks), 30)
        await other.close()
        await log.close()
    assert effect.calls + other_effect.calls == ["r-slow"]


async def test_a_dead_workers_event_goes_to_another_worker_after_one_ack_wait(nats_server) -> None:
    """The worker holding the event goes silent (its connection drops mid-handler): another finishes it."""
    dying = await JetStreamEventLog.connect(nats_server.url, ack_wait=ACK_WAIT)
    stuck = Effect(0, hang=asyncio.Event())
    dead = _dispatcher(dying, stuck)
    dead_task = asyncio.create_task(dead.run())
    live_log = await JetStreamEventLog.connect(nats_server.url, ack_wait=ACK_WAIT)
    try:
        await dying.append(submitted("r-orphan"))
        for _ in range(500):
            if stuck.calls:
                break
            await asyncio.sleep(0.02)
        dead_task.cancel()  # the worker dies: no nak, no ack, no more heartbeats
        await dying.nc.close()
        survivor = Effect(0)
        live = _dispatcher(live_log, survivor)
        live_task = asyncio.create_task(live.run())
        await asyncio.wait_for(_started(live_log, "r-orphan"), 30)
        live.stop()
        await asyncio.wait_for(live_task, 10)
    finally:
        stuck.hang.set()  # type: ignore[union-attr]
        await live_log.close()
    assert survivor.calls == ["r-orphan"]


def test_the_default_ack_wait_is_seconds_and_the_shipped_consumer_agrees() -> None:
    """A dead worker's events come back within seconds by default (docs/workers.md states the bound)."""
    shipped = Definitions.load().consumer_config("apollo-workers").ack_wait
    assert shipped == NatsSettings().ack_wait
    assert shipped <= 10


async def test_the_workers_heartbeat_is_a_third_of_the_configured_ack_wait(tmp_path) -> None:
    """`apollo worker` derives its heartbeat from nats.ack_wait."""
    from engine.app.bootstrap import Runtime
    from engine.config.settings import validate

    settings = validate({"nats": {"ack_wait": 9}})
    runtime = Runtime(settings=settings, log=None, services=Services())  # type: ignore[arg-type]
    assert runtime.dispatcher().settings.heartbeat == pytest.approx(3.0)
