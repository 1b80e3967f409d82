"""Messages published by foreign clients straight onto run subjects, on a real nats-server."""

from __future__ import annotations

import asyncio
import json

import nats
import pytest

from engine.nats.jetstream import JetStreamEventLog
from engine.runtime.dispatcher import Dispatcher
from engine.testing.event_builders import submitted
from events import EventRejected, RunStarted, encode
from handlers.context import Services
from tests.engine.test_dispatcher import _has, drain, fast, routes

pytestmark = pytest.mark.nats


async def test_plain_nats_client_submission_is_picked_up(nats_server) -> None:
    """A problem.submitted published by plain nats-py with Nats-Msg-Id starts a run."""
    log = await JetStreamEventLog.connect(nats_server.url)
    nc = await nats.connect(nats_server.url)
    try:
        js = nc.jetstream()
        body = encode(submitted("r-ext", event_id="r-ext"))
        for _ in range(2):  # resubmitting is a no-op
            await js.publish("apollo.run.r-ext.problem.submitted", body, headers={"Nats-Msg-Id": "r-ext"})
        dispatcher = Dispatcher(log, routes(), Services(), fast())
        await drain(dispatcher, log, until=lambda: _has(log, "r-ext", RunStarted))
        assert [type(r.event).__name__ for r in await log.read_run("r-ext")] == ["ProblemSubmitted", "RunStarted"]
    finally:
        await nc.close()
        await log.close()


async def test_bad_messages_on_the_bus_are_rejected_and_the_worker_keeps_serving(nats_server) -> None:
    """Malformed JSON, unknown type, missing fields and oversized events never stop the worker."""
    log = await JetStreamEventLog.connect(nats_server.url, max_event_bytes=4096)
    nc = await nats.connect(nats_server.url)
    try:
        js = nc.jetstream()
        await js.publish("apollo.run.r-junk.problem.submitted", b"{oops")
        await js.publish("apollo.run.r-unknown.some.new_thing", json.dumps({"type": "some.new_thing"}).encode())
        await js.publish("apollo.run.r-missing.problem.submitted", b'{"type": "problem.submitted"}')
        await js.publish("apollo.run.r-big.problem.submitted", encode(submitted("r-big", question="x" * 10_000)))
        with pytest.raises(Exception):  # noqa: B017 - the server refuses above max_payload
            await js.publish("apollo.run.r-huge.problem.submitted", b"x" * (2 * 1024 * 1024))
        await log.append(submitted("r-fine"))
        dispatcher = Dispatcher(log, routes(), Services(), fast())

        async def settled() -> bool:
            return all([
                await _has(log, "r-fine", RunStarted),
                await _has(log, "r-junk", EventRejected),
                await _has(log, "r-missing", EventRejected),
                await _has(log, "r-big", EventRejected),
            ])

        await drain(dispatcher, log, until=settled)
        [big] = [r.event for r in await log.read_run("r-big") if isinstance(r.event, EventRejected)]
        assert "exceeds the limit" in big.reason
        assert await log.read_run("r-unknown") == []
    finally:
        await nc.close()
        await log.close()


async def test_two_workers_share_a_stream_without_duplicate_outputs(nats_server) -> None:
    """Two dispatchers on the same durable consumer split the work; each run starts once."""
    logs = [await JetStreamEventLog.connect(nats_server.url) for _ in range(2)]
    try:
        for index in range(40):
            await logs[0].append(submitted(f"r-{index}"))
        # Fewer slots than submissions, so neither worker can hold them all.
        dispatchers = [Dispatcher(log, routes(), Services(), fast(concurrency=8)) for log in logs]
        tasks = [asyncio.create_task(d.run()) for d in dispatchers]
        for _ in range(300):
            done = [await _has(logs[0], f"r-{i}", RunStarted) for i in range(40)]
            if all(done):
                break
            await asyncio.sleep(0.05)
        for d in dispatchers:
            d.stop()
        await asyncio.gather(*tasks)
        for index in range(40):
            started = [r for r in await logs[0].read_run(f"r-{index}") if isinstance(r.event, RunStarted)]
            assert len(started) == 1
        assert all(d.handled > 0 for d in dispatchers)
    finally:
        for log in logs:
            await log.close()
