"""Effects run ahead: the worker that appends an effect's input runs it at once, exactly once."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence

import pytest

from engine.dispatcher import Dispatcher, DispatcherSettings
from engine.eventlog.jetstream import CLAIM_HEADER, JetStreamEventLog
from engine.eventlog.memory import InMemoryEventLog
from engine.eventlog.port import ClaimStatus
from engine.nats_server import NatsServerProcess
from events import ProblemSubmitted, RunCompleted, RunStarted
from events.base import Event
from events.codec import encode
from events.subjects import subject_for
from handlers.context import HandlerContext, Services, derive_id
from handlers.routes import Route
from tests.support.factories import started, submitted


class Flow:
    """submitted -> (effect) started -> (slow effect) completed, counting each effect."""

    def __init__(self, work_seconds: float = 0.0) -> None:
        self.starts: Counter[str] = Counter()
        self.works: Counter[str] = Counter()
        self.work_seconds = work_seconds

    async def start(self, event: ProblemSubmitted, ctx: HandlerContext) -> Sequence[Event]:
        self.starts[event.run_id] += 1
        return [ctx.new(RunStarted, "result", workflow="reason")]

    async def work(self, event: RunStarted, ctx: HandlerContext) -> Sequence[Event]:
        self.works[event.run_id] += 1
        await asyncio.sleep(self.work_seconds)
        return [ctx.new(RunCompleted, "result", done_reason="answer")]

    def routes(self) -> list[Route]:
        return [
            Route(ProblemSubmitted, self.start, "effect", "start"),
            Route(RunStarted, self.work, "effect", "work"),
        ]


def fast(**changes: object) -> DispatcherSettings:
    return DispatcherSettings(pull_timeout=0.05, backoff_base=0.05, backoff_max=0.2, **changes)  # type: ignore[arg-type]


async def run_until_completed(logs: list, flow: Flow, run_ids: list[str], settings: DispatcherSettings) -> None:  # noqa: ANN001
    dispatchers = [Dispatcher(log, flow.routes(), Services(), settings) for log in logs]
    tasks = [asyncio.create_task(d.run()) for d in dispatchers]
    try:
        for _ in range(500):
            if all([await _completed(logs[0], run_id) for run_id in run_ids]):
                await asyncio.sleep(0.3)  # let the last deliveries (and any re-run) happen
                return
            await asyncio.sleep(0.02)
        raise AssertionError("runs did not complete")
    finally:
        for dispatcher in dispatchers:
            dispatcher.stop()
        await asyncio.wait_for(asyncio.gather(*tasks), 20)


async def _completed(log, run_id: str) -> bool:  # noqa: ANN001
    return any(isinstance(r.event, RunCompleted) for r in await log.read_run(run_id))


@pytest.mark.parametrize("workers", [1, 3])
async def test_an_effect_claimed_by_its_appender_runs_once(workers: int) -> None:
    log = InMemoryEventLog()
    runs = [f"r-{index}" for index in range(6)]
    for run_id in runs:
        await log.append(submitted(run_id))
    flow = Flow(work_seconds=0.05)
    await run_until_completed([log] * workers, flow, runs, fast())
    assert flow.works == Counter(dict.fromkeys(runs, 1))
    for run_id in runs:
        tags = [type(r.event).__name__ for r in await log.read_run(run_id)]
        assert tags == ["ProblemSubmitted", "RunStarted", "RunCompleted"]


async def test_without_running_ahead_nothing_is_claimed() -> None:
    log = InMemoryEventLog()
    await log.append(submitted("plain"))
    flow = Flow()
    await run_until_completed([log], flow, ["plain"], fast(run_effects_ahead=False))
    assert flow.works == Counter({"plain": 1})
    assert log._claims == {}  # noqa: SLF001 - what the deliveries would carry


async def test_an_event_claimed_by_a_vanished_worker_is_handled_as_usual() -> None:
    log = InMemoryEventLog()
    await log.append(started("orphan", causation_id="orphan"), claimed_by="crashed-worker")
    flow = Flow()
    await run_until_completed([log], flow, ["orphan"], fast())
    assert flow.works == Counter({"orphan": 1})


async def test_an_event_whose_claimant_is_still_at_it_waits_for_its_outputs() -> None:
    """Put back while the claimant says it is running; then its recorded outputs count."""
    log = InMemoryEventLog()
    claimed = started("busy", causation_id="busy")
    await log.append(claimed, claimed_by="other-worker")
    asked: list[str] = []
    asked_twice, finished = asyncio.Event(), asyncio.Event()

    def still_running(event_id: str) -> bool:
        asked.append(event_id)
        if len(asked) >= 2:
            asked_twice.set()
        return not finished.is_set()

    await log.serve_claims("other-worker", still_running)

    async def claimant_finishes() -> None:
        await asked_twice.wait()
        done = RunCompleted(
            event_id=derive_id(claimed.event_id, "work", "result"), run_id="busy", occurred_at=claimed.occurred_at,
            causation_id=claimed.event_id, done_reason="answer",
        )
        await log.append(done)
        finished.set()

    flow = Flow()
    finishing = asyncio.create_task(claimant_finishes())
    await run_until_completed([log], flow, ["busy"], fast())
    await finishing
    assert len(asked) >= 3 and set(asked) == {claimed.event_id}
    assert flow.works == Counter()  # the claimant's output was there: the effect never ran here


async def test_two_jetstream_workers_run_each_effect_once(nats_server: NatsServerProcess) -> None:
    logs = [await JetStreamEventLog.connect(nats_server.url) for _ in range(2)]
    try:
        runs = [f"js-{index}" for index in range(12)]
        for run_id in runs:
            await logs[0].append(submitted(run_id))
        flow = Flow(work_seconds=0.1)
        await run_until_completed(logs, flow, runs, fast())
        assert flow.starts == Counter(dict.fromkeys(runs, 1))
        assert flow.works == Counter(dict.fromkeys(runs, 1))
        info = await logs[0].js.consumer_info(logs[0].stream, "apollo-workers")
        assert info.num_ack_pending == 0 and info.num_pending == 0
    finally:
        for log in logs:
            await log.close()


async def test_claim_questions_over_nats(jetstream_log: JetStreamEventLog) -> None:
    running = {"e-1"}
    await jetstream_log.serve_claims("worker-a", running.__contains__)
    assert await jetstream_log.claim_status("worker-a", "e-1") is ClaimStatus.RUNNING
    assert await jetstream_log.claim_status("worker-a", "e-2") is ClaimStatus.NOT_RUNNING
    assert await jetstream_log.claim_status("nobody", "e-1") is ClaimStatus.GONE
    assert await jetstream_log.claim_status("bad.subject.>", "e-1") is ClaimStatus.GONE


@pytest.mark.parametrize("header", ["a.b", "*", ">", "", "x" * 65, "spaces in it"])
async def test_a_malformed_claim_header_from_the_bus_is_no_claim(
    jetstream_log: JetStreamEventLog, header: str
) -> None:
    event = submitted("forged")
    await jetstream_log.append_raw(subject_for(event), encode(event), event.event_id, {CLAIM_HEADER: header})
    queue = await jetstream_log.work_queue("apollo-workers")
    deliveries = await queue.pull(1, 2.0)
    assert [d.claimed_by for d in deliveries] == [None]


class SlowAcknowledgements(InMemoryEventLog):
    """Stores at once but answers a claimed append late: its delivery comes before the answer."""

    async def append(self, event, *, expected_run_seq=None, claimed_by=None):  # noqa: ANN001, ANN201
        appended = await super().append(event, expected_run_seq=expected_run_seq, claimed_by=claimed_by)
        if claimed_by is not None:
            await asyncio.sleep(0.2)
        return appended


async def test_a_delivery_that_overtakes_its_append_waits_for_the_claimant() -> None:
    log = SlowAcknowledgements()
    await log.append(submitted("overtaken"))
    flow = Flow()
    await run_until_completed([log], flow, ["overtaken"], fast())
    assert flow.works == Counter({"overtaken": 1})
