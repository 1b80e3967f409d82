"""History reads a handler depends on reach the delivered event and the worker's own appends.

A stream replica that is behind answers direct gets with a correct but short prefix (issue
26, E). These tests make reads lag on purpose, on the in-memory log and on a real
nats-server, and check that no handler ever decides on the short history.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence

import pytest

from engine.errors import StaleHistory
from engine.eventlog.memory import InMemoryEventLog
from engine.nats.jetstream import JetStreamEventLog
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.runtime.histories import RunHistories
from engine.testing.event_builders import started, submitted
from events import ProblemSubmitted, RunCompleted, RunStarted
from events.base import Event
from events.record import Recorded
from events.run import HandlerFailed
from handlers.context import HandlerContext, Services
from handlers.routes import Route


class Lagging:
    """Mixin: the first ``lagging_reads`` direct reads of each run miss its newest ``behind`` events.

    That is what a replica that has not applied the last appends returns: a prefix.
    ``leader_lags`` makes the leader's reads short too, that many times per run.
    """

    def lag(self, *, lagging_reads: int, behind: int = 1, leader_lags: int = 0) -> None:
        self.lagging_reads, self.behind, self.leader_lags = lagging_reads, behind, leader_lags
        self.reads: Counter[str] = Counter()
        self.leader_reads: Counter[str] = Counter()

    async def read_run(self, run_id: str, **window: int | None) -> list[Recorded]:
        records = await super().read_run(run_id, **window)  # type: ignore[misc]
        self.reads[run_id] += 1
        if self.reads[run_id] > self.lagging_reads:
            return records
        return await self._short(run_id, records)

    async def read_run_from_leader(self, run_id: str, **options: object) -> list[Recorded]:
        records = await super().read_run_from_leader(run_id, **options)  # type: ignore[misc]
        self.leader_reads[run_id] += 1
        if self.leader_reads[run_id] > self.leader_lags:
            return records
        return await self._short(run_id, records)

    async def unlagged(self, run_id: str) -> list[Recorded]:
        """The run as it is stored (the test's own reads, uncounted)."""
        return await super().read_run(run_id)  # type: ignore[misc]

    async def _short(self, run_id: str, records: list[Recorded]) -> list[Recorded]:
        whole = await self.unlagged(run_id)
        if len(whole) < self.behind:
            return []
        newest_visible = whole[-self.behind - 1].seq if len(whole) > self.behind else 0
        return [record for record in records if record.seq <= newest_visible]


class LaggingMemoryLog(Lagging, InMemoryEventLog):
    def __init__(self, **lag: int) -> None:
        super().__init__()
        self.lag(**lag)


class LaggingJetStreamLog(Lagging, JetStreamEventLog):
    """A real JetStream log whose direct reads are made to lag (the server itself is fine)."""


class Decider:
    """Completes a run on RunStarted, noting the history it was given."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    async def finish(self, event: RunStarted, ctx: HandlerContext) -> Sequence[Event]:
        self.seen.append([type(e).__name__ for e in ctx.history])
        if ctx.history[-1] != event:
            return []  # deciding on a history without its own input: the bug under test
        return [ctx.new(RunCompleted, "done", done_reason="answer")]

    async def watch(self, event: RunStarted, ctx: HandlerContext) -> Sequence[Event]:
        return []

    def routes(self) -> list[Route]:
        # The tests append RunStarted themselves; an effect on it has it delivered, so its
        # decision is taken on the history read for that delivery.
        return [Route(RunStarted, self.finish, "decide", "finish"), Route(RunStarted, self.watch, "effect", "watch")]


async def _work_until_completed(log: Lagging, decider: Decider, run_ids: list[str]) -> Dispatcher:
    dispatcher = Dispatcher(log, decider.routes(), Services(),
                            DispatcherSettings(pull_timeout=0.05, backoff_base=0.05))
    working = asyncio.create_task(dispatcher.run())
    try:
        for _ in range(400):
            done = 0
            for run_id in run_ids:
                done += any(isinstance(r.event, RunCompleted) for r in await log.unlagged(run_id))
            if done == len(run_ids):
                break
            await asyncio.sleep(0.02)
        else:
            raise AssertionError(f"runs not completed; the decider saw {decider.seen}")
    finally:
        dispatcher.stop()
        await asyncio.wait_for(working, 10)
    return dispatcher


async def test_a_short_read_is_read_again_until_it_reaches_the_delivered_event() -> None:
    """A replica one event behind: the history is read again, not decided on."""
    log = LaggingMemoryLog(lagging_reads=2)
    await log.append(submitted("r-lag"))
    delivered = await log.append(started("r-lag"))
    histories = RunHistories(log)
    records = await histories.latest("r-lag", delivered.seq)
    assert records[-1].seq == delivered.seq
    assert histories.short_reads == 1
    assert log.reads["r-lag"] == 3
    assert log.leader_reads["r-lag"] == 0


async def test_replicas_that_stay_behind_send_the_read_to_the_stream_leader() -> None:
    """When every re-read is short, the leader answers."""
    log = LaggingMemoryLog(lagging_reads=100, behind=2)
    await log.append(submitted("r-behind"))
    delivered = await log.append(started("r-behind"))
    records = await RunHistories(log).latest("r-behind", delivered.seq)
    assert [type(r.event) for r in records] == [ProblemSubmitted, RunStarted]
    assert log.leader_reads["r-behind"] == 1


async def test_a_history_short_even_on_the_leader_is_an_error_not_a_decision() -> None:
    """Nothing reaches the delivered event: StaleHistory, never a short list."""
    log = LaggingMemoryLog(lagging_reads=100, leader_lags=100)
    await log.append(submitted("r-stale"))
    delivered = await log.append(started("r-stale"))
    with pytest.raises(StaleHistory, match="r-stale"):
        await RunHistories(log).latest("r-stale", delivered.seq)


async def test_a_read_reaches_the_last_event_this_worker_appended() -> None:
    """Read-your-writes: an older event's read must still include this worker's later append."""
    log = LaggingMemoryLog(lagging_reads=1)
    first = await log.append(submitted("r-own"))
    mine = await log.append(started("r-own"))
    histories = RunHistories(log)
    histories.wrote("r-own", mine.seq)
    records = await histories.latest("r-own", first.seq)
    assert records[-1].seq == mine.seq
    assert histories.short_reads == 1


async def test_a_record_that_can_never_be_read_still_counts_as_reached() -> None:
    """Garbage stored after the run's events: the read reached it, so it is no reason to wait."""
    log = LaggingMemoryLog(lagging_reads=0)
    await log.append(submitted("r-garbage"))
    garbage = await log.append_raw("apollo.run.r-garbage.run.started", b"{not json")
    histories = RunHistories(log)
    records = await histories.latest("r-garbage", garbage.seq)
    assert [type(r.event) for r in records] == [ProblemSubmitted]
    assert histories.short_reads == 0


async def test_a_decider_never_sees_a_history_without_its_input() -> None:
    """Through the dispatcher: lagging reads delay the decision, they do not change it."""
    log = LaggingMemoryLog(lagging_reads=2)
    await log.append(submitted("r-decide"))
    await log.append(started("r-decide"))
    decider = Decider()
    dispatcher = await _work_until_completed(log, decider, ["r-decide"])
    assert decider.seen == [["ProblemSubmitted", "RunStarted"]]
    assert dispatcher.histories.short_reads == 1


async def test_a_leader_that_is_behind_too_is_retried_without_counting_a_handler_failure() -> None:
    """StaleHistory is broker trouble: the delivery is retried, no handler.failed is recorded."""
    log = LaggingMemoryLog(lagging_reads=8, leader_lags=2)
    await log.append(submitted("r-retry"))
    await log.append(started("r-retry"))
    decider = Decider()
    await _work_until_completed(log, decider, ["r-retry"])
    assert decider.seen == [["ProblemSubmitted", "RunStarted"]]
    events = [r.event for r in await log.unlagged("r-retry")]
    assert not any(isinstance(e, HandlerFailed) for e in events)


@pytest.mark.nats
async def test_lagging_direct_reads_on_a_real_server_are_caught_up(nats_server) -> None:
    """A real JetStream log with lagging direct reads: the decider still sees its input."""
    log = await LaggingJetStreamLog.connect(nats_server.url)
    log.lag(lagging_reads=2)
    try:
        run_ids = [f"r-real-{index}" for index in range(3)]
        for run_id in run_ids:
            await log.append(submitted(run_id))
            await log.append(started(run_id))
        decider = Decider()
        dispatcher = await _work_until_completed(log, decider, run_ids)
        assert decider.seen == [["ProblemSubmitted", "RunStarted"]] * 3
        assert dispatcher.histories.short_reads == 3
    finally:
        await log.close()


@pytest.mark.nats
async def test_reading_from_the_leader_returns_what_a_direct_read_returns(nats_server) -> None:
    """Same records, offloaded bodies resolved, either way of reading."""
    log = await JetStreamEventLog.connect(nats_server.url, inline_limit=4096)
    try:
        await log.append(submitted("r-both", question="x" * 10_000))  # stored through the Object Store
        await log.append(started("r-both"))
        await log.append(submitted("r-other"))
        await log.append(RunCompleted(event_id="c", run_id="r-both", occurred_at=started().occurred_at,
                                      done_reason="answer"))
        direct = await log.read_run("r-both")
        leader = await log.read_run_from_leader("r-both")
        assert leader == direct
        assert len(leader) == 3 and leader[0].event.question == "x" * 10_000
        assert await log.read_run_from_leader("r-both", after_seq=direct[1].seq) == direct[2:]
        assert await log.read_run_from_leader("r-none") == []
    finally:
        await log.close()
