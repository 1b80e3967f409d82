"""A worker's history cache keeps runs in flight and lets go of runs that have ended."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence

from engine.app.operations import submit
from engine.eventlog.memory import InMemoryEventLog
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.runtime.histories import RunHistories
from engine.testing.event_builders import submitted
from events import ProblemSubmitted, RunCancelled, RunCompleted, RunStarted
from events.base import Event
from events.record import Recorded
from events.subjects import subject_for
from handlers.context import HandlerContext, Services
from handlers.routes import Route

FINISHING = "finishing"
"""Runs whose id starts with this complete; the others stay open after RunStarted."""


class Flow:
    """Starts every run; completes only the finishing ones, noting how much history it saw."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    async def start(self, event: ProblemSubmitted, ctx: HandlerContext) -> Sequence[Event]:
        return [ctx.new(RunStarted, "result", workflow="reason")]

    async def finish(self, event: RunStarted, ctx: HandlerContext) -> Sequence[Event]:
        self.seen.append(len(ctx.history))
        if not event.run_id.startswith(FINISHING):
            return []
        return [ctx.new(RunCompleted, "done", done_reason="answer")]

    def routes(self) -> list[Route]:
        return [
            Route(ProblemSubmitted, self.start, "effect", "start"),
            Route(RunStarted, self.finish, "decide", "finish"),
        ]


async def _until(condition, dispatcher: Dispatcher) -> None:  # an async predicate
    for _ in range(400):
        if await condition():
            await asyncio.sleep(0.1)  # the last deliveries, endings included, are handled too
            return
        await asyncio.sleep(0.02)
    dispatcher.stop()
    raise AssertionError("the runs did not get there")


async def _tags(log: InMemoryEventLog, run_id: str) -> list[str]:
    records = await InMemoryEventLog.read_run(log, run_id)  # the test's own reads go uncounted
    return [type(record.event).__name__ for record in records]


async def test_ended_runs_leave_the_cache_and_runs_in_flight_stay() -> None:
    """Ended runs leave the history cache while runs still in flight stay cached."""
    log = InMemoryEventLog()
    finishing, open_run = [f"{FINISHING}-{index}" for index in range(3)], "open-0"
    for run_id in [*finishing, open_run]:
        await log.append(submitted(run_id))
    dispatcher = Dispatcher(log, Flow().routes(), Services(), DispatcherSettings(pull_timeout=0.05))
    working = asyncio.create_task(dispatcher.run())

    async def settled() -> bool:
        ended = all(["RunCompleted" in await _tags(log, run_id) for run_id in finishing])
        return ended and "RunStarted" in await _tags(log, open_run)

    try:
        await _until(settled, dispatcher)
    finally:
        dispatcher.stop()
        await asyncio.wait_for(working, 10)
    assert [dispatcher.histories.cached(run_id) for run_id in finishing] == [[], [], []]
    assert [type(r.event).__name__ for r in dispatcher.histories.cached(open_run)] == ["ProblemSubmitted", "RunStarted"]


async def test_an_event_after_a_run_ended_is_decided_on_its_whole_history() -> None:
    """An event arriving after a run ended and left the cache is decided on the run's whole history."""
    log = InMemoryEventLog()
    run_id = f"{FINISHING}-late"
    await log.append(submitted(run_id))
    flow = Flow()
    dispatcher = Dispatcher(log, flow.routes(), Services(), DispatcherSettings(pull_timeout=0.05))
    working = asyncio.create_task(dispatcher.run())
    try:
        await _until(lambda: _ended(log, run_id, 1), dispatcher)
        assert dispatcher.histories.cached(run_id) == []
        # A late submission on the same run (delivered, as every effect's input is) starts it
        # again: the decision below it must see all five events.
        await log.append(submitted(run_id, event_id="late-submission"))
        await _until(lambda: _ended(log, run_id, 2), dispatcher)
    finally:
        dispatcher.stop()
        await asyncio.wait_for(working, 10)
    assert flow.seen == [2, 5]


async def _ended(log: InMemoryEventLog, run_id: str, times: int) -> bool:
    return (await _tags(log, run_id)).count("RunCompleted") == times


async def test_an_append_never_restarts_a_forgotten_run_from_a_partial_history() -> None:
    """The cache never extends a forgotten run, or one not ending at the given seq, from a partial history."""
    log = InMemoryEventLog()
    histories = RunHistories(log)
    first = await log.append(submitted("r"))
    await histories.latest("r", first.seq)
    started = RunStarted(event_id="s", run_id="r", occurred_at=submitted("r").occurred_at, workflow="reason")
    later = Recorded(first.seq + 1, subject_for(started), started)
    histories.forget("r")
    assert not histories.extend("r", later, after_seq=first.seq)
    assert histories.cached("r") == []
    await histories.latest("r", first.seq)  # read again: the whole prefix
    assert not histories.extend("r", later, after_seq=first.seq + 5)  # not where the cache ends
    assert histories.extend("r", later, after_seq=first.seq)
    assert [record.seq for record in histories.cached("r")] == [first.seq, first.seq + 1]


class CountingReads(InMemoryEventLog):
    """Counts history reads per run."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: Counter[str] = Counter()

    async def read_run(self, run_id: str, **window: int | None) -> list[Recorded]:
        self.reads[run_id] += 1
        return await super().read_run(run_id, **window)


async def test_a_submission_that_opened_its_run_is_handled_without_reading_history() -> None:
    """A submission that opened its run is handled without reading the run's history from the log."""
    log = CountingReads()
    opened, plain = f"{FINISHING}-opened", f"{FINISHING}-plain"
    await submit(log, submitted(opened))
    await log.append(submitted(plain))
    dispatcher = Dispatcher(log, Flow().routes(), Services(), DispatcherSettings(pull_timeout=0.05))
    working = asyncio.create_task(dispatcher.run())
    try:
        await _until(lambda: _both_ended(log, [opened, plain]), dispatcher)
    finally:
        dispatcher.stop()
        await asyncio.wait_for(working, 10)
    assert log.reads[opened] == 0
    assert log.reads[plain] == 1


async def _both_ended(log: InMemoryEventLog, run_ids: list[str]) -> bool:
    return all([await _ended(log, run_id, 1) for run_id in run_ids])


async def test_a_cancelled_run_leaves_the_cache_at_the_first_delivery_that_finds_the_cancellation() -> None:
    """A cancellation is not delivered; the next delivery of the run sees it, runs nothing and lets the run go."""
    log = InMemoryEventLog()
    run_id = "open-cancelled"
    await log.append(submitted(run_id))
    dispatcher = Dispatcher(log, Flow().routes(), Services(), DispatcherSettings(pull_timeout=0.05))
    working = asyncio.create_task(dispatcher.run())
    try:
        await _until(lambda: _has_tag(log, run_id, "RunStarted"), dispatcher)
        assert dispatcher.histories.cached(run_id)
        await log.append(RunCancelled(event_id="cancel", run_id=run_id, occurred_at=submitted(run_id).occurred_at,
                                      reason="asked", by="test"))
        await log.append(submitted(run_id, event_id="after-the-cancellation"))
        await _until(lambda: _acked_all(log), dispatcher)
    finally:
        dispatcher.stop()
        await asyncio.wait_for(working, 10)
    assert dispatcher.histories.cached(run_id) == []
    assert (await _tags(log, run_id)).count("RunStarted") == 1  # the stopped effect recorded nothing


async def _has_tag(log: InMemoryEventLog, run_id: str, tag: str) -> bool:
    return tag in await _tags(log, run_id)


async def _acked_all(log: InMemoryEventLog) -> bool:
    state = log._consumers["apollo-workers"]
    return state.cursor == len(log._messages) and not state.redeliver and len(state.acked) == 2
