"""The work consumer's filter on a real nats-server: it delivers what effects react to (and
submissions), an older consumer is narrowed when the definitions are applied, a worker that
routes more widens it, and garbage outside it is still recorded, by the projector."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import nats
import pytest
from nats.js import api

from engine.nats.jetstream import PAYLOAD_HEADER, JetStreamEventLog
from engine.nats.jetstream.work_queue import filters_of
from engine.nats.streams import delivered_subjects
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.runtime.projector import Projector
from engine.testing.event_builders import submitted
from events import EventRejected, RunFailed, RunStarted
from events.base import Event
from handlers.context import HandlerContext, Services
from handlers.routes import Route

pytestmark = pytest.mark.nats

CONSUMER = "apollo-workers"
MISSING_DIGEST = "1" * 64
STUB = b'{"payload_sha256":"' + MISSING_DIGEST.encode() + b'","size":10}'
"""An offloaded body's stub naming an object the store does not have."""


async def _filters(log: JetStreamEventLog) -> list[str]:
    return filters_of((await log.js.consumer_info(log.stream, CONSUMER)).config)


def test_the_definitions_deliver_the_four_effect_inputs() -> None:
    """The route table gives submissions, model and tool requests and parsed actions, nothing else."""
    assert delivered_subjects() == [
        "apollo.run.*.action.parsed",
        "apollo.run.*.model.call_requested",
        "apollo.run.*.problem.submitted",
        "apollo.run.*.tool.call_requested",
    ]


async def test_applying_the_definitions_narrows_a_consumer_an_older_version_made(nats_server) -> None:
    """A work consumer filtered to every run subject is narrowed to the delivered types."""
    log = await JetStreamEventLog.connect(nats_server.url)
    try:
        info = await log.js.consumer_info(log.stream, CONSUMER)
        older = info.config.evolve(filter_subjects=None, filter_subject="apollo.run.>")
        await log.js.add_consumer(log.stream, older)
        assert await _filters(log) == ["apollo.run.>"]
    finally:
        await log.close()
    log = await JetStreamEventLog.connect(nats_server.url)  # applies the definitions again
    try:
        assert sorted(await _filters(log)) == delivered_subjects()
    finally:
        await log.close()


async def test_a_worker_routing_an_effect_on_an_undelivered_type_widens_the_consumer(nats_server) -> None:
    """A worker whose table routes more than the filter delivers widens it, and then receives those events."""
    seen: list[str] = []

    async def start(event: Event, ctx: HandlerContext) -> Sequence[Event]:
        return [ctx.new(RunStarted, "result", workflow="reason")]

    async def watch(event: RunStarted, ctx: HandlerContext) -> Sequence[Event]:
        seen.append(event.run_id)
        return []

    log = await JetStreamEventLog.connect(nats_server.url)
    try:
        await log.append(submitted("r-wide"))
        routes = [Route(type(submitted()), start, "effect", "start"), Route(RunStarted, watch, "effect", "watch")]
        dispatcher = Dispatcher(log, routes, Services(), DispatcherSettings(pull_timeout=0.05, backoff_base=0.0))
        task = asyncio.create_task(dispatcher.run())
        try:
            for _ in range(300):
                if seen:
                    break
                await asyncio.sleep(0.02)
        finally:
            dispatcher.stop()
            await asyncio.wait_for(task, 10)
        assert seen == ["r-wide"]
        assert "apollo.run.*.run.started" in await _filters(log)
    finally:
        await log.close()


async def test_garbage_on_an_undelivered_subject_is_recorded_by_the_projector_once(nats_server) -> None:
    """Junk on a type no worker is delivered becomes one event.rejected on its run; a lost engine body fails it."""
    log = await JetStreamEventLog.connect(nats_server.url)
    nc = await nats.connect(nats_server.url)
    try:
        js = nc.jetstream()
        await log.append(submitted("r-junk"))
        await js.publish("apollo.run.r-junk.model.responded", b"{oops")
        await log.append(submitted("r-lost"))
        await js.publish("apollo.run.r-lost.tool.returned", STUB,
                         headers={PAYLOAD_HEADER: MISSING_DIGEST, "Nats-Msg-Id": "lost-1"})
        await js.publish("apollo.run.r-left.problem.submitted", b"{left to the workers")
        projector = Projector(log, work_filter=delivered_subjects())
        for _ in range(2):  # a second pass (a restart) records nothing more
            projector.position = 0
            await projector.catch_up()
        [junk] = [r.event for r in await log.read_run("r-junk") if isinstance(r.event, EventRejected)]
        assert junk.subject == "apollo.run.r-junk.model.responded" and "JSON" in junk.reason
        assert junk.excerpt == "{oops"  # quoted as a worker's rejection quotes it
        lost = [type(r.event) for r in await log.read_run("r-lost")]
        assert lost.count(EventRejected) == 1 and lost.count(RunFailed) == 1
        assert await log.read_run("r-left") == []  # on a delivered subject: a worker's to reject
    finally:
        await nc.close()
        await log.close()


def test_a_consumer_config_with_no_filter_covers_everything() -> None:
    """A consumer with neither filter field set is read as delivering every subject."""
    assert filters_of(api.ConsumerConfig(durable_name=CONSUMER)) == [">"]
