"""A stopping worker hands back the events it holds at once, not one ack wait later."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from engine.nats.jetstream import JetStreamEventLog
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.testing.event_builders import submitted
from events import ProblemSubmitted, RunStarted
from events.base import Event
from handlers.context import HandlerContext, Services
from handlers.routes import Route

ACK_WAIT_S = 300.0
"""Far longer than the test waits: a handed-back event cannot be a redelivery after the ack wait."""


def _routes(handler) -> list[Route]:
    return [Route(ProblemSubmitted, handler, "decide", "start")]


async def _until(condition, limit: float = 60.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not await condition():
        assert loop.time() < deadline, "condition not reached"
        await asyncio.sleep(0.05)


async def test_a_stopped_worker_hands_back_a_stuck_event_to_the_next_worker(nats_server) -> None:
    """A handler that never ends is cancelled on stop and its event goes straight to another worker."""
    log = await JetStreamEventLog.connect(nats_server.url, ack_wait=ACK_WAIT_S)
    entered = asyncio.Event()

    async def stuck(event: ProblemSubmitted, ctx: HandlerContext) -> Sequence[Event]:
        entered.set()
        await asyncio.Event().wait()  # a model call that never answers
        return []

    async def start(event: ProblemSubmitted, ctx: HandlerContext) -> Sequence[Event]:
        return [ctx.new(RunStarted, "started", workflow="reason")]

    try:
        await log.append(submitted("r-stuck"))
        settings = DispatcherSettings(pull_timeout=0.05, stop_grace=0.2)
        first = Dispatcher(log, _routes(stuck), Services(), settings)
        first_task = asyncio.create_task(first.run())
        await asyncio.wait_for(entered.wait(), 60)
        first.stop()
        await asyncio.wait_for(first_task, 60)  # ends although its handler never would

        second = Dispatcher(log, _routes(start), Services(), settings)
        second_task = asyncio.create_task(second.run())
        try:
            async def started() -> bool:
                return any(isinstance(r.event, RunStarted) for r in await log.read_run("r-stuck"))

            await _until(started)
        finally:
            second.stop()
            await asyncio.wait_for(second_task, 60)
    finally:
        await log.close()


async def test_handlers_that_finish_within_the_grace_period_are_acknowledged(nats_server) -> None:
    """Stopping does not cancel work about to finish: its outputs are recorded and nothing is redone."""
    log = await JetStreamEventLog.connect(nats_server.url, ack_wait=ACK_WAIT_S)
    entered = asyncio.Event()
    calls = 0

    async def slowish(event: ProblemSubmitted, ctx: HandlerContext) -> Sequence[Event]:
        nonlocal calls
        calls += 1
        entered.set()
        await asyncio.sleep(0.2)
        return [ctx.new(RunStarted, "started", workflow="reason")]

    try:
        await log.append(submitted("r-quick"))
        dispatcher = Dispatcher(log, _routes(slowish), Services(),
                                DispatcherSettings(pull_timeout=0.05, stop_grace=30.0))
        task = asyncio.create_task(dispatcher.run())
        await asyncio.wait_for(entered.wait(), 60)
        dispatcher.stop()
        await asyncio.wait_for(task, 60)
        tags = [type(r.event).__name__ for r in await log.read_run("r-quick")]
        assert tags == ["ProblemSubmitted", "RunStarted"]
        assert calls == 1
    finally:
        await log.close()
