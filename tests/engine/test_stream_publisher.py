"""The acknowledged publisher against a real nats-server: sequences, refusals, silence, garbage."""

from __future__ import annotations

import asyncio

import nats
import pytest

from engine.errors import PublishError, RunMovedOn
from engine.nats.jetstream import JetStreamEventLog
from engine.nats.publisher import PublishRefused, PublishTimeout, StreamPublisher
from engine.nats.server import NatsServerProcess
from engine.testing.event_builders import submitted


async def _never_answer(msg) -> None:  # nats callback
    del msg


async def test_concurrent_appends_each_get_their_own_sequence(jetstream_log: JetStreamEventLog) -> None:
    """Concurrent appends each get their own stream sequence, matching what is stored."""
    events = [submitted(run_id=f"pub-{i}") for i in range(200)]
    appended = await asyncio.gather(*(jetstream_log.append(event) for event in events))
    assert sorted(a.seq for a in appended) == list(range(1, 201))
    stored = {record.event.run_id: record.seq async for record in jetstream_log.read_all()}
    assert stored == {event.run_id: a.seq for event, a in zip(events, appended, strict=True)}


async def test_a_repeated_message_id_is_reported_as_a_duplicate(jetstream_log: JetStreamEventLog) -> None:
    """Appending an event again is reported as a duplicate at the first append's sequence."""
    event = submitted(run_id="dup")
    first = await jetstream_log.append(event)
    again = await jetstream_log.append(event)
    assert (first.duplicate, again.duplicate) == (False, True)
    assert again.seq == first.seq


async def test_a_failed_expectation_is_run_moved_on(jetstream_log: JetStreamEventLog) -> None:
    """An append expecting a stale run sequence raises RunMovedOn."""
    first = await jetstream_log.append(submitted(run_id="moved"))
    await jetstream_log.append(submitted(run_id="moved", event_id="second"))
    with pytest.raises(RunMovedOn):
        await jetstream_log.append(submitted(run_id="moved", event_id="third"), expected_run_seq=first.seq)


async def test_a_subject_no_stream_stores_is_refused_not_hung(jetstream_log: JetStreamEventLog) -> None:
    """Publishing to a subject no stream stores is refused promptly instead of hanging."""
    with pytest.raises(PublishError, match="refused: no stream"):
        await jetstream_log.append_raw("nobody.stores.this", b"{}")


async def test_silence_fails_after_the_timeout(nats_server: NatsServerProcess) -> None:
    """A responder that never answers (no stream, but someone listening) ends in a timeout."""
    nc = await nats.connect(nats_server.url)
    try:
        await nc.subscribe("silent.subject", cb=_never_answer)
        publisher = StreamPublisher(nc, timeout=0.3)
        with pytest.raises(PublishTimeout):
            await publisher.publish("silent.subject", b"x", None)
        await publisher.close()
    finally:
        await nc.close()


@pytest.mark.parametrize("reply", [b"not json", b'{"stream": "S"}', b"[1, 2]", b'{"seq": "seven"}'])
async def test_a_garbage_acknowledgement_is_a_clear_refusal(nats_server: NatsServerProcess, reply: bytes) -> None:
    """A garbage acknowledgement reply is a clear PublishRefused naming the acknowledgement."""
    nc = await nats.connect(nats_server.url)
    try:
        async def answer(msg) -> None:  # nats callback
            await msg.respond(reply)

        await nc.subscribe("garbage.acks", cb=answer)
        publisher = StreamPublisher(nc, timeout=5.0)
        with pytest.raises(PublishRefused, match="acknowledgement"):
            await publisher.publish("garbage.acks", b"x", None)
        await publisher.close()
    finally:
        await nc.close()


async def _unanswered(nc: nats.NATS, subject: str, ack_timeout: float) -> tuple[StreamPublisher, asyncio.Task]:
    """A publish under way on a subject whose only listener never answers."""
    await nc.subscribe(subject, cb=_never_answer)
    publisher = StreamPublisher(nc, timeout=ack_timeout)
    waiting = asyncio.create_task(publisher.publish(subject, b"x", None))
    await asyncio.sleep(0.2)
    return publisher, waiting


async def test_closing_fails_publishes_still_waiting(nats_server: NatsServerProcess) -> None:
    """Closing the publisher fails publishes still waiting for an acknowledgement with a timeout."""
    nc = await nats.connect(nats_server.url)
    try:
        publisher, waiting = await _unanswered(nc, "slow.subject", 30.0)
        await publisher.close()
        with pytest.raises(PublishTimeout):
            await asyncio.wait_for(waiting, 5)
    finally:
        await nc.close()


async def test_appends_are_acknowledged_again_after_the_server_restarts(nats_server: NatsServerProcess) -> None:
    """The shared acknowledgement inbox is subscribed again on reconnect."""
    log = await JetStreamEventLog.connect(nats_server.url)
    try:
        before = await log.append(submitted(run_id="before-restart"))
        nats_server.stop()
        nats_server.start()
        for _ in range(100):  # the connection comes back first, the stream a moment later
            try:
                after = await log.append(submitted(run_id="after-restart"))
                break
            except PublishError:
                await asyncio.sleep(0.1)
        else:
            raise AssertionError("appends never acknowledged after the restart")
        assert after.seq == before.seq + 1  # a retried append is stored once (it may come back a duplicate)
    finally:
        await log.close()


async def test_a_publish_waiting_across_a_reconnect_fails_without_waiting_out_the_timeout(
    nats_server: NatsServerProcess,
) -> None:
    """Its acknowledgement may have been lost with the old connection: the caller retries now."""
    nc = await nats.connect(nats_server.url)
    try:
        publisher, waiting = await _unanswered(nc, "silent.reconnect", 60.0)
        nc.stats["reconnects"] += 1  # what nats-py counts when it reconnects
        with pytest.raises(PublishTimeout, match="re-established"):
            await asyncio.wait_for(waiting, 10)
        await publisher.close()
    finally:
        await nc.close()


async def test_only_a_condition_on_the_events_own_run_reaches_the_delivery(jetstream_log: JetStreamEventLog) -> None:
    """A foreign client's condition on another run's filter proves nothing about this run."""
    from events.codec import encode
    from events.subjects import run_filter, subject_for

    other_run, elsewhere = submitted(run_id="cond-other"), submitted(run_id="cond-a")
    condition = "Nats-Expected-Last-Subject-Sequence"
    await jetstream_log.append(other_run)
    await jetstream_log.append_raw(
        subject_for(elsewhere), encode(elsewhere), elsewhere.event_id,
        {condition: "1", f"{condition}-Subject": run_filter("cond-other")},
    )
    queue = await jetstream_log.work_queue("apollo-workers")
    got = []
    for _ in range(20):
        got += await queue.pull(2 - len(got), 1.0)
        if len(got) == 2:
            break
    assert {delivery.event.run_id: delivery.expected_run_seq for delivery in got} == {
        "cond-other": None, "cond-a": None,
    }


def test_a_condition_header_that_is_not_a_number_is_ignored() -> None:
    """The server refuses such appends; a header edited in the store must not be trusted either."""
    from engine.nats.jetstream.work_queue import expected_run_seq as _expected_run_seq
    from events.subjects import run_filter

    event = submitted(run_id="cond-c")
    headers = {"Nats-Expected-Last-Subject-Sequence-Subject": run_filter("cond-c")}
    assert _expected_run_seq({**headers, "Nats-Expected-Last-Subject-Sequence": "zero"}, event) is None
    assert _expected_run_seq(headers, event) is None
    assert _expected_run_seq({**headers, "Nats-Expected-Last-Subject-Sequence": "0"}, event) == 0
