"""``EventStore.follow``: a run's events as they are recorded, on the in-memory and the JetStream logs."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncGenerator
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from engine.errors import BusUnavailable
from engine.eventlog.memory import InMemoryEventLog
from engine.nats.server import NatsServerProcess
from engine.nats.transient import retrying
from engine.runtime.signals import run_command
from engine.testing.event_builders import started, submitted
from events import RunCompleted
from events.record import Unreadable
from events.subjects import subject_for_tag

WAIT_S = 30.0
"""A guard against a hang only: every wait below ends long before it."""


async def _take(following, count: int) -> list:
    return await asyncio.wait_for(_next(following, count), WAIT_S)


async def _next(following, count: int) -> list:
    return [await anext(following) for _ in range(count)]


def _completed(run_id: str) -> RunCompleted:
    return RunCompleted(event_id=f"{run_id}-done", run_id=run_id, occurred_at=datetime.now(UTC), done_reason="answer")


async def test_events_recorded_while_following_arrive_in_order_and_once(event_log) -> None:
    """Each event of the run appended after following began is handed out once, in order; other runs' are not."""
    following = event_log.follow("r-f")
    try:
        first = submitted("r-f")
        await event_log.append(first)
        assert [r.event for r in await _take(following, 1)] == [first]  # the follow is under way
        later = [started("r-f") for _ in range(5)]
        for event in later:
            await event_log.append(started("r-other"))
            await event_log.append(event)
        records = await _take(following, 5)
        assert [r.event for r in records] == later
        assert [r.seq for r in records] == sorted({r.seq for r in records})
    finally:
        await following.aclose()


async def test_following_starts_after_the_given_sequence(event_log) -> None:
    """Events already stored after ``after`` come first, then the new ones; those up to ``after`` never."""
    events = [submitted("r-a"), started("r-a"), started("r-a")]
    seqs = [(await event_log.append(event)).seq for event in events]
    following = event_log.follow("r-a", seqs[0])
    try:
        new = started("r-a")
        await event_log.append(new)
        assert [r.event for r in await _take(following, 3)] == [*events[1:], new]
    finally:
        await following.aclose()


async def test_closing_the_follow_ends_it(event_log) -> None:
    """A closed follow hands out nothing more, and the JetStream one leaves no reconnect hook behind."""
    await event_log.append(submitted("r-c"))
    following = event_log.follow("r-c")
    await _take(following, 1)
    await following.aclose()
    await event_log.append(started("r-c"))
    with pytest.raises(StopAsyncIteration):
        await anext(following)
    if hasattr(event_log, "events"):
        assert event_log.events.client_events.reconnect_listeners == []


async def test_unreadable_messages_are_skipped_and_reported_once(event_log) -> None:
    """A message of the run that is not an event is reported once; the events around it still arrive."""
    unreadable: list[Unreadable] = []
    following = event_log.follow("r-u", unreadable=unreadable)
    try:
        first, last = submitted("r-u"), started("r-u")
        await event_log.append(first)
        await event_log.append_raw(subject_for_tag("r-u", "run.started"), b"{not json")
        await event_log.append(last)
        assert [r.event for r in await _take(following, 2)] == [first, last]
        assert len(unreadable) == 1
    finally:
        await following.aclose()


async def test_a_follow_loses_and_repeats_nothing_across_a_server_restart(nats_server: NatsServerProcess) -> None:
    """The server restarts mid-follow: every event, before and after, is handed out exactly once, in order."""
    from engine.nats.jetstream import JetStreamEventLog

    log = await JetStreamEventLog.connect(nats_server.url)
    following = log.follow("r-restart")
    try:
        before = [submitted("r-restart"), started("r-restart")]
        for event in before:
            await log.append(event)
        assert [r.event for r in await _take(following, 1)] == before[:1]
        nats_server.stop()
        nats_server.start()
        after = [started("r-restart") for _ in range(3)]
        for event in after:
            await retrying(lambda event=event: log.append(event), doing="append after the restart")
        assert [r.event for r in await _take(following, 4)] == [*before[1:], *after]
    finally:
        await following.aclose()
        await log.close()


async def test_watch_run_returns_the_run_when_it_completes_while_watched(event_log) -> None:
    """`watch_run` hands each event to ``on_event`` as it is recorded and returns them all at run.completed."""
    from engine.app.operations import watch_run

    await event_log.append(submitted("r-w"))
    seen: list = []
    first_seen = asyncio.Event()

    def on_event(record: object) -> None:
        seen.append(record)
        first_seen.set()

    watching = asyncio.create_task(
        watch_run(SimpleNamespace(log=event_log), "r-w", on_event, timeout=WAIT_S)  # type: ignore[arg-type]
    )
    await asyncio.wait_for(first_seen.wait(), WAIT_S)  # the stored event is read before following begins
    rest = [started("r-w"), _completed("r-w")]
    for event in rest:
        await event_log.append(event)
    records = await asyncio.wait_for(watching, WAIT_S)
    assert [r.event.event_id for r in records] == [r.event.event_id for r in seen]
    assert [r.event for r in records][1:] == rest
    if hasattr(event_log, "events"):
        assert event_log.events.client_events.reconnect_listeners == []


class _Watched:
    """A log that can record an event right after watch_run's first read (before its follow
    starts) and notes whether it was followed."""

    def __init__(self, log, recorded_after_the_read=None) -> None:
        self.log = log
        self.recorded_after_the_read = recorded_after_the_read
        self.followed = False

    async def read_run(self, run_id: str, **kwargs) -> list:
        records = await self.log.read_run(run_id, **kwargs)
        if self.recorded_after_the_read is not None:
            await self.log.append(self.recorded_after_the_read)
        return records

    def follow(self, run_id: str, after: int = 0, **kwargs):
        self.followed = True
        return self.log.follow(run_id, after, **kwargs)


def _no_follow_left(event_log) -> bool:
    return not hasattr(event_log, "events") or event_log.events.client_events.reconnect_listeners == []


async def test_watch_run_returns_a_run_that_ended_before_it_was_watched(event_log) -> None:
    """A run already ended is returned whole from one read, without following it."""
    from engine.app.operations import watch_run

    events = [submitted("r-done"), started("r-done"), _completed("r-done")]
    for event in events:
        await event_log.append(event)
    watched = _Watched(event_log)
    records = await asyncio.wait_for(watch_run(SimpleNamespace(log=watched), "r-done", timeout=WAIT_S), WAIT_S)  # type: ignore[arg-type]
    assert [r.event for r in records] == events
    assert not watched.followed


async def test_watch_run_sees_a_run_that_ends_between_its_read_and_its_follow(event_log) -> None:
    """run.completed recorded after the first read but before the follow starts still ends the watch."""
    from engine.app.operations import watch_run

    first, ending = submitted("r-race"), _completed("r-race")
    await event_log.append(first)
    watched = _Watched(event_log, recorded_after_the_read=ending)
    records = await asyncio.wait_for(watch_run(SimpleNamespace(log=watched), "r-race", timeout=WAIT_S), WAIT_S)  # type: ignore[arg-type]
    assert [r.event for r in records] == [first, ending]
    assert watched.followed
    assert _no_follow_left(event_log)


async def test_watch_run_gives_up_at_its_timeout_and_closes_its_follow(event_log) -> None:
    """A run that records nothing more: watch_run raises TimeoutError at its deadline and leaves no follow behind."""
    from engine.app.operations import watch_run

    await event_log.append(submitted("r-slow"))
    with pytest.raises(TimeoutError, match="did not finish within"):
        await asyncio.wait_for(watch_run(SimpleNamespace(log=event_log), "r-slow", timeout=0.5), WAIT_S)  # type: ignore[arg-type]
    assert _no_follow_left(event_log)


async def test_a_follow_that_fails_ends_watch_run_with_its_error() -> None:
    """The follow's error (a bus that stays away) ends watch_run instead of leaving it waiting."""
    from engine.app.operations import watch_run

    log = InMemoryEventLog()
    await log.append(submitted("r-gone"))

    async def failing(run_id: str, after: int = 0, **kwargs) -> AsyncGenerator[object, None]:
        await asyncio.sleep(0.1)
        raise BusUnavailable("cannot follow")
        yield  # an async generator, as follow is

    log.follow = failing  # type: ignore[method-assign]
    with pytest.raises(BusUnavailable, match="cannot follow"):
        await asyncio.wait_for(watch_run(SimpleNamespace(log=log), "r-gone", timeout=WAIT_S), WAIT_S)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["memory", "jetstream"])
def test_ctrl_c_ends_watch_run_waiting_on_its_follow(kind: str, request: pytest.FixtureRequest) -> None:
    """Ctrl-C while watch_run waits for the run's next event ends the command as interrupted and closes the follow."""
    from engine.app.operations import watch_run
    from engine.nats.jetstream import JetStreamEventLog

    url = request.getfixturevalue("nats_server").url if kind == "jetstream" else None
    left: list[bool] = []

    async def watch() -> None:
        log = InMemoryEventLog() if url is None else await JetStreamEventLog.connect(url)
        try:
            await log.append(submitted("r-int"))
            asyncio.get_running_loop().call_later(0.5, os.kill, os.getpid(), signal.SIGINT)
            await watch_run(SimpleNamespace(log=log), "r-int", timeout=WAIT_S)  # type: ignore[arg-type]
        finally:
            left.append(_no_follow_left(log))
            await log.close()

    with pytest.raises(KeyboardInterrupt):
        run_command(watch())
    assert left == [True]
