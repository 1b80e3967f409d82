"""Deciding ahead: a worker runs the deciders of events it just appended, once, with no duplicates."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence

from engine.eventlog.memory import InMemoryEventLog
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.testing.event_builders import submitted
from events import HandlerFailed, ProblemSubmitted, RunCompleted, RunStarted
from events.base import Event
from handlers.context import HandlerContext, Services
from handlers.routes import Route


class Flow:
    """An effect that starts a run and a decider that completes it, counting decisions."""

    def __init__(self, *, fail_first: int = 0) -> None:
        self.decisions: Counter[str] = Counter()
        self.fail_first = fail_first

    async def start(self, event: ProblemSubmitted, ctx: HandlerContext) -> Sequence[Event]:
        return [ctx.new(RunStarted, "result", workflow="reason")]

    async def finish(self, event: RunStarted, ctx: HandlerContext) -> Sequence[Event]:
        self.decisions[event.run_id] += 1
        if self.decisions[event.run_id] <= self.fail_first:
            raise RuntimeError("not this time")
        return [ctx.new(RunCompleted, "done", done_reason="answer")]

    def routes(self) -> list[Route]:
        return [
            Route(ProblemSubmitted, self.start, "effect", "start"),
            Route(RunStarted, self.finish, "decide", "finish"),
        ]


def fast() -> DispatcherSettings:
    return DispatcherSettings(pull_timeout=0.05, backoff_base=0.0)


async def run_workers(log: InMemoryEventLog, flow: Flow, run_ids: list[str], workers: int = 1) -> None:
    dispatchers = [Dispatcher(log, flow.routes(), Services(), fast()) for _ in range(workers)]
    tasks = [asyncio.create_task(d.run()) for d in dispatchers]
    try:
        for _ in range(400):
            if all([await _completed(log, run_id) for run_id in run_ids]):
                await asyncio.sleep(0.1)  # let the last deliveries be handled too
                return
            await asyncio.sleep(0.02)
        raise AssertionError("runs did not complete")
    finally:
        for dispatcher in dispatchers:
            dispatcher.stop()
        await asyncio.wait_for(asyncio.gather(*tasks), 10)


async def _completed(log: InMemoryEventLog, run_id: str) -> bool:
    return any(isinstance(r.event, RunCompleted) for r in await log.read_run(run_id))


async def test_a_decision_taken_ahead_is_not_taken_again_on_delivery() -> None:
    """A decision taken ahead of delivery is not taken again when the event is delivered."""
    log = InMemoryEventLog()
    runs = [f"r-{index}" for index in range(5)]
    for run_id in runs:
        await log.append(submitted(run_id))
    flow = Flow()
    await run_workers(log, flow, runs)
    assert flow.decisions == Counter(dict.fromkeys(runs, 1))
    for run_id in runs:
        tags = [type(r.event).__name__ for r in await log.read_run(run_id)]
        assert tags == ["ProblemSubmitted", "RunStarted", "RunCompleted"]


class WithheldRunStarted(InMemoryEventLog):
    """A log whose work queue never hands out RunStarted (acked unseen), to show who decided."""

    async def work_queue(self, consumer: str):  # the memory queue's type is private
        queue = await super().work_queue(consumer)
        pull = queue.pull

        async def pull_without_run_started(batch: int, timeout: float):
            kept = []
            for delivery in await pull(batch, timeout):
                if delivery.subject.endswith(".run.started"):
                    await delivery.ack()
                else:
                    kept.append(delivery)
            return kept

        queue.pull = pull_without_run_started
        return queue


async def test_the_worker_that_appends_an_event_decides_on_it_without_waiting_for_delivery() -> None:
    """The worker that appends an event decides on it without waiting for its delivery."""
    log = WithheldRunStarted()
    await log.append(submitted("r-ahead"))
    flow = Flow()
    await run_workers(log, flow, ["r-ahead"])
    assert flow.decisions["r-ahead"] == 1


async def test_a_decider_that_fails_ahead_is_decided_again_on_delivery() -> None:
    """A decider that fails ahead of delivery is retried on delivery without recording a failure."""
    log = InMemoryEventLog()
    await log.append(submitted("r-retry"))
    flow = Flow(fail_first=1)
    await run_workers(log, flow, ["r-retry"])
    events = [r.event for r in await log.read_run("r-retry")]
    assert [type(e).__name__ for e in events] == ["ProblemSubmitted", "RunStarted", "RunCompleted"]
    assert not any(isinstance(e, HandlerFailed) for e in events)
    assert flow.decisions["r-retry"] == 2


async def test_workers_sharing_a_queue_record_every_decision_once() -> None:
    """Workers sharing a queue record each run's events exactly once."""
    log = InMemoryEventLog()
    runs = [f"r-shared-{index}" for index in range(20)]
    for run_id in runs:
        await log.append(submitted(run_id))
    await run_workers(log, Flow(), runs, workers=3)
    for run_id in runs:
        ids = [r.event.event_id for r in await log.read_run(run_id)]
        assert len(ids) == len(set(ids)) == 3


class StartCounting(Flow):
    def __init__(self) -> None:
        super().__init__()
        self.starts = 0

    async def start(self, event: ProblemSubmitted, ctx: HandlerContext) -> Sequence[Event]:
        self.starts += 1
        return await super().start(event, ctx)


async def test_an_input_is_acked_before_deciding_ahead_and_its_outputs_delivery_decides_if_that_breaks() -> None:
    """Deciding ahead follows the input's ack: trouble there neither redelivers the input nor loses a decision."""
    log = InMemoryEventLog()
    await log.append(submitted("r-acked-first"))
    flow = StartCounting()
    dispatcher = Dispatcher(log, flow.routes(), Services(), fast())
    acked_when_deciding: list[set[int]] = []

    async def broken_decide_ahead(appended, depth: int = 0) -> None:
        acked_when_deciding.append(set(log._consumers["apollo-workers"].acked))
        raise RuntimeError("worker trouble while deciding ahead")

    dispatcher._decide_ahead = broken_decide_ahead  # type: ignore[method-assign]
    task = asyncio.create_task(dispatcher.run())
    try:
        for _ in range(400):
            if await _completed(log, "r-acked-first"):
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)
    finally:
        dispatcher.stop()
        await asyncio.wait_for(task, 10)
    events = [r.event for r in await log.read_run("r-acked-first")]
    assert [type(e).__name__ for e in events] == ["ProblemSubmitted", "RunStarted", "RunCompleted"]
    assert flow.starts == 1  # the input was acked, not redelivered
    assert flow.decisions["r-acked-first"] == 1  # decided once, on RunStarted's own delivery
    assert 1 in acked_when_deciding[0]  # ProblemSubmitted (seq 1) was acked before deciding ahead
