"""The event stream is stored with S2 block compression: a run's texts recur in its events
(a reply in model.responded, the next prompt's delta, trajectory.sealed), so they cost about
once on disk (docs/replay.md, bench/read_scale.py)."""

from __future__ import annotations

import nats
import pytest
from nats.js import api

from engine.nats.jetstream import JetStreamEventLog
from engine.nats.server import NatsServerProcess
from engine.nats.streams import Definitions

pytestmark = pytest.mark.nats


async def _stream_after_start(url: str) -> api.StreamInfo:
    """The stream as an engine start (which manages the streams) leaves it."""
    log = await JetStreamEventLog.connect(url, manage_streams=True)
    try:
        return await log.js.stream_info(log.stream)
    finally:
        await log.close()


async def test_a_new_stream_is_created_with_s2_compression(nats_server: NatsServerProcess) -> None:
    """Starting on an empty server creates the stream compressed."""
    info = await _stream_after_start(nats_server.url)
    assert info.config.compression == api.StoreCompression.S2


async def test_a_stream_created_uncompressed_is_switched_to_s2_by_the_next_start(
        nats_server: NatsServerProcess) -> None:
    """A stream made before compression (or by hand) is updated in place, its events kept."""
    config = Definitions.load().stream_config()
    config.compression = api.StoreCompression.NONE
    client = await nats.connect(nats_server.url)
    try:
        js = client.jetstream()
        await js.add_stream(config)
        await js.publish("apollo.run.before.problem.submitted", b"{}")
    finally:
        await client.close()
    info = await _stream_after_start(nats_server.url)
    assert info.config.compression == api.StoreCompression.S2
    assert info.state.messages == 1


def test_the_shipped_definitions_ask_for_s2() -> None:
    """The definitions file (deploy/streams/apollo.json) names s2, and the config carries it."""
    assert Definitions.load().stream_config().compression == api.StoreCompression.S2
