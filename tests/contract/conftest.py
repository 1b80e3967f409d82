"""The event log each contract test runs against: the in-memory one and a JetStream one."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from engine.eventlog.memory import InMemoryEventLog


@pytest.fixture(params=["memory", "jetstream"])
async def event_log(request: pytest.FixtureRequest) -> AsyncIterator[object]:
    if request.param == "memory":
        yield InMemoryEventLog()
        return
    from engine.nats.jetstream import JetStreamEventLog

    server = request.getfixturevalue("nats_server")
    log = await JetStreamEventLog.connect(server.url)
    try:
        yield log
    finally:
        await log.close()
