"""The live projector: checkpoints equal a clean rebuild, also after a crash mid-stream."""

from __future__ import annotations

import asyncio

import pytest

from engine.eventlog.memory import InMemoryEventLog
from engine.nats.jetstream import JetStreamEventLog
from engine.runtime.projector import CURSOR_KEY, Projector, run_projector
from handlers.projections.registry import projections
from replay.rebuild import check_against_checkpoint, checkpoint_key, decode_checkpoint, rebuild_run, state_bytes
from tests.replay.support import golden


class Crash(Exception):
    """Stands in for the process dying."""


class CrashingLog:
    """Delegates to a real log but dies after ``puts`` checkpoint writes."""

    def __init__(self, inner: object, puts: int) -> None:
        self.inner, self.puts = inner, puts

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    async def put_checkpoint(self, name: str, data: bytes) -> None:
        if self.puts <= 0:
            raise Crash
        self.puts -= 1
        await self.inner.put_checkpoint(name, data)


async def _load_runs(log: object, copies: int) -> list[str]:
    """Interleave several golden runs on one log (as concurrent runs interleave)."""
    import msgspec

    histories = []
    for i in range(copies):
        for name in ("good_code_then_answer", "good_invalid_code_answer"):
            run_id = f"{name.replace('_', '-')}-{i}"
            histories.append([msgspec.structs.replace(r.event, run_id=run_id, event_id=f"{r.event.event_id}-{i}")
                              for r in golden(name)])
    longest = max(len(h) for h in histories)
    for index in range(longest):
        for history in histories:
            if index < len(history):
                await log.append(history[index])
    return [h[0].run_id for h in histories]


async def _assert_live_equals_rebuild(log: object, run_ids: list[str]) -> None:
    for run_id in run_ids:
        records = await log.read_run(run_id)
        for name, projection in projections().items():
            data = await log.get_checkpoint(checkpoint_key(name, run_id))
            assert data is not None
            assert decode_checkpoint(data).last_seq == records[-1].seq
            assert check_against_checkpoint(records, projection, data).ok
            assert bytes(decode_checkpoint(data).state) == state_bytes(rebuild_run(records)[name])


async def test_projector_checkpoints_equal_a_clean_rebuild() -> None:
    """After catching up, every run's checkpoint equals its rebuild."""
    log = InMemoryEventLog()
    run_ids = await _load_runs(log, 2)
    folded = await Projector(log, flush_every=7).catch_up()
    assert folded == await log.last_seq()
    await _assert_live_equals_rebuild(log, run_ids)


@pytest.mark.parametrize("puts", [0, 1, 3, 8, 13])
async def test_projector_crashed_mid_stream_resumes_to_the_rebuild_state(puts: int, jetstream_log) -> None:
    """A projector that dies after any checkpoint write resumes to exactly the rebuild state."""
    run_ids = await _load_runs(jetstream_log, 2)
    with pytest.raises(Crash):
        await Projector(CrashingLog(jetstream_log, puts), flush_every=5).catch_up()
    more = await _load_runs(_Renamed(jetstream_log, "late"), 1)
    await Projector(jetstream_log, flush_every=5).catch_up()
    await _assert_live_equals_rebuild(jetstream_log, run_ids + more)


async def test_projector_follows_new_events_until_stopped(nats_server) -> None:
    """run_projector keeps folding what is appended while it runs, across a reconnect."""
    log = await JetStreamEventLog.connect(nats_server.url)
    stop = asyncio.Event()
    task = asyncio.create_task(run_projector(log, stop, poll=0.02, flush_every=4))
    run_ids = await _load_runs(log, 1)
    for _ in range(500):
        data = await log.get_checkpoint(CURSOR_KEY)
        if data and b'"last_seq":%d' % await log.last_seq() in data:
            break
        await asyncio.sleep(0.02)
    stop.set()
    await asyncio.wait_for(task, 10)
    await log.close()
    fresh = await JetStreamEventLog.connect(nats_server.url)
    try:
        await _assert_live_equals_rebuild(fresh, run_ids)
        assert await Projector(fresh).catch_up() == 0
    finally:
        await fresh.close()


async def test_garbage_checkpoint_is_rebuilt_from_the_log() -> None:
    """An unreadable run checkpoint is replaced by a rebuild, not trusted or fatal."""
    log = InMemoryEventLog()
    run_ids = await _load_runs(log, 1)
    await log.put_checkpoint(checkpoint_key("episode", run_ids[0]), b"{garbage")
    await log.put_checkpoint(CURSOR_KEY, b"not a cursor")
    await Projector(log).catch_up()
    await _assert_live_equals_rebuild(log, run_ids)


class _Renamed:
    """Appends through ``inner`` with a suffix on every run id (a second batch of runs)."""

    def __init__(self, inner: object, suffix: str) -> None:
        self.inner, self.suffix = inner, suffix

    async def append(self, event):
        import msgspec

        return await self.inner.append(msgspec.structs.replace(
            event, run_id=f"{event.run_id}-{self.suffix}", event_id=f"{event.event_id}-{self.suffix}"))
