"""The dispatcher: outputs before ack, exactly-once under redelivery, bad input contained."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from engine.eventlog.memory import InMemoryEventLog
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.testing.event_builders import submitted
from events import EventRejected, HandlerFailed, ProblemSubmitted, RunFailed, RunStarted
from events.base import Event
from handlers.context import HandlerContext, Services
from handlers.routes import Route


async def start(event: ProblemSubmitted, ctx: HandlerContext) -> Sequence[Event]:
    return [ctx.new(RunStarted, "started", workflow="reason")]


def routes(handler=start) -> list[Route]:
    return [Route(ProblemSubmitted, handler, "decide", "start")]


async def drain(dispatcher: Dispatcher, log, *, until) -> None:
    """Run the dispatcher until ``until()`` holds (bounded)."""
    task = asyncio.create_task(dispatcher.run())
    try:
        for _ in range(400):
            if await until():
                return
            await asyncio.sleep(0.02)
        raise AssertionError("condition not reached")
    finally:
        dispatcher.stop()
        await asyncio.wait_for(task, 10)


def fast(**kwargs) -> DispatcherSettings:
    return DispatcherSettings(pull_timeout=0.05, backoff_base=0.0, **kwargs)


async def tags(log, run_id: str) -> list[str]:
    return [type(r.event).__name__ for r in await log.read_run(run_id)]


async def test_handler_outputs_are_recorded_for_the_run() -> None:
    """A submission handled by the start route yields exactly one RunStarted."""
    log = InMemoryEventLog()
    await log.append(submitted("r-1"))
    dispatcher = Dispatcher(log, routes(), Services(), fast())
    await drain(dispatcher, log, until=lambda: _has(log, "r-1", RunStarted))
    assert await tags(log, "r-1") == ["ProblemSubmitted", "RunStarted"]


async def test_redelivered_event_produces_no_duplicate_outputs() -> None:
    """Handling the same delivery twice (a crash before ack) records its outputs once."""
    log = InMemoryEventLog()
    event = submitted("r-2")
    await log.append(event)
    dispatcher = Dispatcher(log, routes(), Services(), fast())
    queue = await log.work_queue("apollo-workers")
    [delivery] = await queue.pull(1, 1.0)
    await dispatcher.handle(delivery)
    log._handled.clear()  # forget the KV mark too: only output dedup is left
    await dispatcher.handle(delivery)
    assert await tags(log, "r-2") == ["ProblemSubmitted", "RunStarted"]


async def test_malformed_json_on_a_run_subject_is_recorded_as_rejected() -> None:
    """Garbage bytes become an EventRejected on the run and the worker goes on."""
    log = InMemoryEventLog()
    await log.append_raw("apollo.run.r-bad.problem.submitted", b"{not json")
    await log.append(submitted("r-good"))
    dispatcher = Dispatcher(log, routes(), Services(), fast())
    await drain(dispatcher, log, until=lambda: _has(log, "r-good", RunStarted))
    [rejected] = [r.event for r in await log.read_run("r-bad")]
    assert isinstance(rejected, EventRejected)
    assert "not a JSON object" in rejected.reason


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b'{"type": "problem.submitted", "run_id": "r-m"}', "invalid 'problem.submitted' event"),
        (b'[1, 2, 3]', "not a JSON object"),
        (b'{"no_type": 1}', "no string 'type'"),
        (b"\xff\xfe", "not a JSON object"),
    ],
)
async def test_invalid_payloads_become_rejections_with_reasons(payload: bytes, reason: str) -> None:
    """Missing fields, wrong shapes and bad encodings are rejected with a readable reason."""
    log = InMemoryEventLog()
    await log.append_raw("apollo.run.r-m.problem.submitted", payload)
    dispatcher = Dispatcher(log, routes(), Services(), fast())
    await drain(dispatcher, log, until=lambda: _has(log, "r-m", EventRejected))
    [rejected] = [r.event for r in await log.read_run("r-m")]
    assert reason in rejected.reason


async def test_unknown_tag_is_acked_and_skipped() -> None:
    """A well-formed event of a type this version does not know is skipped, not retried."""
    log = InMemoryEventLog()
    await log.append_raw("apollo.run.r-u.future.thing", b'{"type": "future.thing", "run_id": "r-u"}')
    await log.append(submitted("r-after"))
    dispatcher = Dispatcher(log, routes(), Services(), fast())
    await drain(dispatcher, log, until=lambda: _has(log, "r-after", RunStarted))
    assert await tags(log, "r-u") == []


async def test_failing_handler_gives_up_with_recorded_failure() -> None:
    """A handler that keeps raising is terminated after max deliveries; the run fails visibly."""

    async def broken(event: ProblemSubmitted, ctx: HandlerContext) -> Sequence[Event]:
        raise RuntimeError("boom")

    log = InMemoryEventLog()
    await log.append(submitted("r-f"))
    dispatcher = Dispatcher(log, routes(broken), Services(), fast(max_deliveries=3))
    await drain(dispatcher, log, until=lambda: _has(log, "r-f", RunFailed))
    events = [r.event for r in await log.read_run("r-f")]
    [failure] = [e for e in events if isinstance(e, HandlerFailed)]
    assert failure.deliveries == 3 and "boom" in failure.error
    assert any(isinstance(e, RunFailed) and "boom" in e.reason for e in events)


async def test_worker_keeps_serving_other_runs_after_a_handler_failure() -> None:
    """One run's failing handler does not stop the next run from being handled."""

    async def picky(event: ProblemSubmitted, ctx: HandlerContext) -> Sequence[Event]:
        if event.run_id == "r-bad":
            raise ValueError("bad run")
        return await start(event, ctx)

    log = InMemoryEventLog()
    await log.append(submitted("r-bad"))
    await log.append(submitted("r-ok"))
    dispatcher = Dispatcher(log, routes(picky), Services(), fast(max_deliveries=2))
    await drain(dispatcher, log, until=lambda: _both(log))
    assert "RunStarted" in await tags(log, "r-ok")


async def _both(log) -> bool:
    return await _has(log, "r-ok", RunStarted) and await _has(log, "r-bad", RunFailed)


async def _has(log, run_id: str, event_type: type[Event]) -> bool:
    return any(isinstance(r.event, event_type) for r in await log.read_run(run_id))
