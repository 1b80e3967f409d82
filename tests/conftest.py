"""Shared fixtures: a real nats-server per test (free port, own store dir)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from engine.nats.server import NatsServerProcess


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[NatsServerProcess]:
    """A fresh JetStream server for one test; ``.url`` to connect, ``.kill()`` for faults."""
    server = NatsServerProcess(store_dir=tmp_path / "nats-store").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def jetstream_log(nats_server: NatsServerProcess) -> AsyncIterator[object]:
    """A connected :class:`JetStreamEventLog` with the stream definitions applied."""
    from engine.nats.jetstream import JetStreamEventLog

    log = await JetStreamEventLog.connect(nats_server.url)
    try:
        yield log
    finally:
        await log.close()
