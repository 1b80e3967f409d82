"""Decisions below a delivery: only effects' events are delivered; the worker that records
an event's cause takes the decisions on it before acknowledging that cause, once."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections import Counter
from collections.abc import Sequence

from engine.errors import RunMovedOn
from engine.eventlog.memory import InMemoryEventLog
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.testing.event_builders import submitted
from events import EventRejected, HandlerFailed, ProblemSubmitted, RunCompleted, RunFailed, RunStarted
from events.base import Event
from events.episode import EpisodeEnded
from events.model import ModelCallRequested, ModelResponded
from handlers.context import HandlerContext, Services
from handlers.routes import Route


class Flow:
    """An effect that starts a run and a decider that completes it, counting both."""

    def __init__(self, *, fail_first: int = 0) -> None:
        self.starts: Counter[str] = Counter()
        self.decisions: Counter[str] = Counter()
        self.fail_first = fail_first
        self.deciding = asyncio.Event()
        self.release = asyncio.Event()
        self.release.set()

    async def start(self, event: ProblemSubmitted, ctx: HandlerContext) -> Sequence[Event]:
        self.starts[event.run_id] += 1
        return [ctx.new(RunStarted, "result", workflow="reason")]

    async def finish(self, event: RunStarted, ctx: HandlerContext) -> Sequence[Event]:
        self.decisions[event.run_id] += 1
        self.deciding.set()
        await self.release.wait()
        if self.decisions[event.run_id] <= self.fail_first:
            raise RuntimeError("not this time")
        return [ctx.new(RunCompleted, "done", done_reason="answer")]

    def routes(self) -> list[Route]:
        return [
            Route(ProblemSubmitted, self.start, "effect", "start"),
            Route(RunStarted, self.finish, "decide", "finish"),
        ]


def fast(**kwargs) -> DispatcherSettings:
    return DispatcherSettings(pull_timeout=0.05, backoff_base=0.0, **kwargs)


class CountingLog(InMemoryEventLog):
    """A memory log that counts what its work queue hands out, by subject tag."""

    def __init__(self) -> None:
        super().__init__()
        self.delivered: Counter[str] = Counter()

    async def work_queue(self, consumer: str, tags: Sequence[str] | None = None):
        queue = await super().work_queue(consumer, tags)
        pull = queue.pull

        async def counted(batch: int, timeout: float):
            deliveries = await pull(batch, timeout)
            self.delivered.update(d.subject.split(".", 3)[3] for d in deliveries)
            return deliveries

        queue.pull = counted  # type: ignore[method-assign]
        return queue


async def run_workers(log: InMemoryEventLog, flow: Flow, run_ids: list[str], workers: int = 1,
                      until: type[Event] = RunCompleted) -> None:
    dispatchers = [Dispatcher(log, flow.routes(), Services(), fast()) for _ in range(workers)]
    tasks = [asyncio.create_task(d.run()) for d in dispatchers]
    try:
        for _ in range(400):
            if all([await _has(log, run_id, until) for run_id in run_ids]):
                await asyncio.sleep(0.1)  # let the last deliveries be handled too
                return
            await asyncio.sleep(0.02)
        raise AssertionError("runs did not finish")
    finally:
        for dispatcher in dispatchers:
            dispatcher.stop()
        await asyncio.wait_for(asyncio.gather(*tasks), 10)


async def _has(log: InMemoryEventLog, run_id: str, event_type: type[Event]) -> bool:
    return any(isinstance(r.event, event_type) for r in await log.read_run(run_id))


async def _submit(log: InMemoryEventLog, prefix: str, count: int) -> list[str]:
    """Submit ``count`` runs named ``<prefix>-<n>``; their ids."""
    runs = [f"{prefix}-{index}" for index in range(count)]
    for run_id in runs:
        await log.append(submitted(run_id))
    return runs


async def _tags(log: InMemoryEventLog, run_id: str) -> list[str]:
    return [type(r.event).__name__ for r in await log.read_run(run_id)]


async def test_only_the_events_an_effect_reacts_to_are_delivered_and_each_decision_is_taken_once() -> None:
    """Submissions are delivered; a decider's input never is, and its decision is taken once per run."""
    log = CountingLog()
    runs = await _submit(log, "r", 5)
    flow = Flow()
    await run_workers(log, flow, runs)
    assert log.delivered == Counter({"problem.submitted": 5})
    assert flow.decisions == Counter(dict.fromkeys(runs, 1)) == flow.starts
    for run_id in runs:
        assert await _tags(log, run_id) == ["ProblemSubmitted", "RunStarted", "RunCompleted"]


async def test_an_input_is_acknowledged_only_after_every_decision_below_it_is_recorded() -> None:
    """While a decision below a delivered event is under way, that event is not yet acknowledged."""
    log = InMemoryEventLog()
    await log.append(submitted("r-held"))
    flow = Flow()
    flow.release.clear()
    dispatcher = Dispatcher(log, flow.routes(), Services(), fast())
    task = asyncio.create_task(dispatcher.run())
    try:
        await asyncio.wait_for(flow.deciding.wait(), 5)
        assert 1 not in log._consumers["apollo-workers"].acked  # the submission, seq 1
        flow.release.set()
        for _ in range(200):
            if 1 in log._consumers["apollo-workers"].acked:
                break
            await asyncio.sleep(0.02)
        assert await _has(log, "r-held", RunCompleted)
        assert 1 in log._consumers["apollo-workers"].acked
    finally:
        dispatcher.stop()
        await asyncio.wait_for(task, 10)


async def test_a_worker_stopped_mid_chain_leaves_its_input_to_a_worker_that_takes_the_missing_decisions() -> None:
    """A worker that stops while deciding hands its input back; the next takes the decision, the effect runs once."""
    log = InMemoryEventLog()
    await log.append(submitted("r-crash"))
    flow = Flow()
    flow.release.clear()
    first = Dispatcher(log, flow.routes(), Services(), fast(stop_grace=0.05))
    task = asyncio.create_task(first.run())
    await asyncio.wait_for(flow.deciding.wait(), 5)
    first.stop()  # its handler is cancelled mid-decision: as good as killed, for the log
    await asyncio.wait_for(task, 10)
    assert await _tags(log, "r-crash") == ["ProblemSubmitted", "RunStarted"]
    flow.release.set()
    await run_workers(log, flow, ["r-crash"])
    assert await _tags(log, "r-crash") == ["ProblemSubmitted", "RunStarted", "RunCompleted"]
    assert flow.starts["r-crash"] == 1  # the redelivered effect found its output recorded
    assert flow.decisions["r-crash"] == 2


async def test_a_decider_that_fails_once_is_retried_with_its_causes_delivery_without_a_recorded_failure() -> None:
    """A decider failing below a delivery makes that delivery retry; the retry decides, nothing records a failure."""
    log = InMemoryEventLog()
    await log.append(submitted("r-retry"))
    flow = Flow(fail_first=1)
    await run_workers(log, flow, ["r-retry"])
    events = [r.event for r in await log.read_run("r-retry")]
    assert [type(e).__name__ for e in events] == ["ProblemSubmitted", "RunStarted", "RunCompleted"]
    assert not any(isinstance(e, HandlerFailed) for e in events)
    assert flow.decisions["r-retry"] == 2
    assert flow.starts["r-retry"] == 1


async def test_a_decider_that_keeps_failing_is_recorded_against_its_own_input() -> None:
    """Giving up on a decision below a delivery records the decider and the event it failed on, then fails the run."""
    log = InMemoryEventLog()
    await log.append(submitted("r-broken"))
    flow = Flow(fail_first=100)
    await run_workers(log, flow, ["r-broken"], until=RunFailed)
    events = [r.event for r in await log.read_run("r-broken")]
    [failure] = [e for e in events if isinstance(e, HandlerFailed)]
    [started] = [e for e in events if isinstance(e, RunStarted)]
    assert failure.handler == "finish"
    assert failure.failed_event_id == started.event_id and failure.failed_type == "run.started"
    assert "not this time" in failure.error and failure.deliveries == fast().max_deliveries
    assert flow.starts["r-broken"] == 1


class ForeignWriterLog(InMemoryEventLog):
    """A log where another writer records an event of the run just before the effect's output."""

    async def append(self, event: Event, *, expected_run_seq: int | None = None):
        if isinstance(event, RunStarted) and expected_run_seq is not None:
            await super().append(EventRejected(
                event_id=f"foreign-{event.run_id}", run_id=event.run_id, occurred_at=event.occurred_at,
                subject="apollo.run.x.y", reason="a foreign writer", stream_seq=0, excerpt="",
            ))
        return await super().append(event, expected_run_seq=expected_run_seq)


async def test_decisions_go_on_from_the_run_read_back_when_another_writer_got_in_between() -> None:
    """When a foreign event lands before an output, the decisions below it are taken on the run read back."""
    log = ForeignWriterLog()
    runs = await _submit(log, "r-moved", 3)
    flow = Flow()
    await run_workers(log, flow, runs)
    for run_id in runs:
        assert await _tags(log, run_id) == ["ProblemSubmitted", "EventRejected", "RunStarted", "RunCompleted"]
    assert flow.decisions == Counter(dict.fromkeys(runs, 1))


async def test_workers_sharing_a_queue_record_every_decision_once() -> None:
    """Workers sharing a queue record each run's events exactly once."""
    log = InMemoryEventLog()
    runs = await _submit(log, "r-shared", 20)
    await run_workers(log, Flow(), runs, workers=3)
    for run_id in runs:
        ids = [r.event.event_id for r in await log.read_run(run_id)]
        assert len(ids) == len(set(ids)) == 3


async def test_a_worker_whose_table_needs_more_than_the_consumer_delivers_widens_it() -> None:
    """A decider-only type is left out of the work consumer until a worker routes an effect on it."""
    log = CountingLog()
    flow = Flow()
    await log.append(submitted("r-widen"))
    await run_workers(log, flow, ["r-widen"])
    await log.append(submitted("r-widen-2"))

    async def effect_on_started(event: RunStarted, ctx: HandlerContext) -> Sequence[Event]:
        return []

    wider = Dispatcher(log, [*flow.routes(), Route(RunStarted, effect_on_started, "effect", "watch")],
                       Services(), fast())
    task = asyncio.create_task(wider.run())
    try:
        for _ in range(200):
            if log.delivered["run.started"]:
                break
            await asyncio.sleep(0.02)
    finally:
        wider.stop()
        await asyncio.wait_for(task, 10)
    assert log.delivered["run.started"] >= 1


class FailsOnce(InMemoryEventLog):
    """A memory log whose first append of a ``run.completed`` is not acknowledged (a failover)."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = True

    async def append(self, event: Event, *, expected_run_seq: int | None = None):
        if isinstance(event, RunCompleted) and self.armed:
            self.armed = False
            raise TimeoutError("no acknowledgement: the stream is electing a leader")
        return await super().append(event, expected_run_seq=expected_run_seq)


class TwoWorkerChain:
    """submitted -(effect)-> run.started -(decide)-> model.call_requested -(effect)->
    model.responded -(decide)-> episode.ended -(decide)-> run.completed."""

    async def start(self, event: ProblemSubmitted, ctx: HandlerContext) -> Sequence[Event]:
        return [ctx.new(RunStarted, "result", workflow="reason")]

    async def ask(self, event: RunStarted, ctx: HandlerContext) -> Sequence[Event]:
        return [ctx.new(ModelCallRequested, "ask", call_id="c", role="policy", step=1, model="m")]

    async def answer(self, event: ModelCallRequested, ctx: HandlerContext) -> Sequence[Event]:
        return [ctx.new(ModelResponded, "result", call_id="c", role="policy", step=1, text="4", model="m")]

    async def end(self, event: ModelResponded, ctx: HandlerContext) -> Sequence[Event]:
        return [ctx.new(EpisodeEnded, "ended", done_reason="answer", reward=1.0, steps=1, invalid_turns=0)]

    async def complete(self, event: EpisodeEnded, ctx: HandlerContext) -> Sequence[Event]:
        return [ctx.new(RunCompleted, "done", done_reason="answer")]

    def routes(self) -> list[Route]:
        return [
            Route(ProblemSubmitted, self.start, "effect", "start"),
            Route(RunStarted, self.ask, "decide", "ask"),
            Route(ModelCallRequested, self.answer, "effect", "answer"),
            Route(ModelResponded, self.end, "decide", "end"),
            Route(EpisodeEnded, self.complete, "decide", "complete"),
        ]


async def test_a_redelivery_to_a_worker_whose_cache_ends_at_its_input_finds_what_another_worker_recorded() -> None:
    """Worker B records part of the chain below an input and fails; the redelivery goes to worker A,
    whose cache ends exactly at that input: A reads the run to its end and takes the missing decision."""
    log = FailsOnce()
    chain = TwoWorkerChain()
    await log.append(submitted("r-split"))
    first, second = (Dispatcher(log, chain.routes(), Services(), fast()) for _ in range(2))
    queue = await log.work_queue("apollo-workers", ["problem.submitted", "model.call_requested"])
    [submission] = await queue.pull(1, 0.1)
    await first.handle(submission)  # first writes run.started and model.call_requested: its cache ends there
    [request] = await queue.pull(1, 0.1)
    await second.handle(request)  # records model.responded and episode.ended, then run.completed fails
    assert await _tags(log, "r-split") == [
        "ProblemSubmitted", "RunStarted", "ModelCallRequested", "ModelResponded", "EpisodeEnded"]
    [again] = await queue.pull(1, 0.1)
    assert again.seq == request.seq and again.deliveries == 2
    await first.handle(again)
    assert await _tags(log, "r-split") == [
        "ProblemSubmitted", "RunStarted", "ModelCallRequested", "ModelResponded", "EpisodeEnded", "RunCompleted"]
    assert request.seq in log._consumers["apollo-workers"].acked


class FlakyLog(InMemoryEventLog):
    """A memory log whose appends fail at random, some after storing (the acknowledgement lost), and
    whose history reads and handled marks fail at random too."""

    def __init__(self, seed: int, rate: float) -> None:
        super().__init__()
        self.random = random.Random(seed)
        self.rate = rate
        self.failures = 0

    async def append(self, event: Event, *, expected_run_seq: int | None = None):
        if self.random.random() >= self.rate:
            return await super().append(event, expected_run_seq=expected_run_seq)
        self.failures += 1
        if self.random.random() < 0.5:
            with contextlib.suppress(RunMovedOn):
                await super().append(event, expected_run_seq=expected_run_seq)
        await asyncio.sleep(0)
        raise TimeoutError("no acknowledgement")

    async def read_run(self, run_id: str, **window):
        if self.random.random() < self.rate / 2:
            self.failures += 1
            raise TimeoutError("no replica answered")
        return await super().read_run(run_id, **window)

    async def mark_handled(self, key: str) -> None:
        if self.random.random() < self.rate / 2:
            self.failures += 1
            raise TimeoutError("the marks bucket did not answer")
        await super().mark_handled(key)


class ThreeTurnChain(TwoWorkerChain):
    """Like :class:`TwoWorkerChain`, with three model calls before the episode ends."""

    async def end(self, event: ModelResponded, ctx: HandlerContext) -> Sequence[Event]:
        if event.step < 3:
            return [ctx.new(ModelCallRequested, "ask", call_id=f"c{event.step + 1}", role="policy",
                            step=event.step + 1, model="m")]
        return await super().end(event, ctx)

    async def answer(self, event: ModelCallRequested, ctx: HandlerContext) -> Sequence[Event]:
        return [ctx.new(ModelResponded, "result", call_id=event.call_id, role="policy", step=event.step,
                        text="4", model="m")]


async def test_runs_finish_with_every_event_once_when_appends_fail_at_random_on_workers_sharing_a_queue() -> None:
    """Generated faults: appends refused or stored-but-unacknowledged, reads and marks failing, at random;
    deliveries go to whichever of three workers pulls next. Every run ends, no event is recorded twice."""
    expected = ["ProblemSubmitted", "RunStarted", *["ModelCallRequested", "ModelResponded"] * 3,
                "EpisodeEnded", "RunCompleted"]
    failures = 0
    for seed in range(12):
        log = FlakyLog(seed, rate=0.15)
        for index in range(6):
            await InMemoryEventLog.append(log, submitted(f"r-{seed}-{index}"))
        chain = ThreeTurnChain()
        dispatchers = [Dispatcher(log, chain.routes(), Services(), fast(concurrency=2)) for _ in range(3)]
        tasks = [asyncio.create_task(d.run()) for d in dispatchers]
        runs = [f"r-{seed}-{index}" for index in range(6)]
        try:
            for _ in range(500):
                if all(["RunCompleted" in await _stored_tags(log, run_id) for run_id in runs]):
                    break
                await asyncio.sleep(0.02)
        finally:
            for dispatcher in dispatchers:
                dispatcher.stop()
            await asyncio.wait_for(asyncio.gather(*tasks), 10)
        for run_id in runs:
            assert await _stored_tags(log, run_id) == expected, f"seed {seed}, run {run_id}"
        failures += log.failures
    assert failures > 50  # the faults did happen


async def _stored_tags(log: InMemoryEventLog, run_id: str) -> list[str]:
    """The run's event types as stored (the test's own read goes round the injected faults)."""
    return [type(r.event).__name__ for r in await InMemoryEventLog.read_run(log, run_id)]
