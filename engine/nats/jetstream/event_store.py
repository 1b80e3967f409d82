"""The event store port on JetStream: appends, reads of a run or the stream, and follows.

A run's events are the messages of its subjects in the one stream. Reads of a run are
batched direct gets; bulk reads and follows go through ordered push consumers.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncGenerator, AsyncIterator, Sequence

import nats.errors
import nats.js.errors
import structlog
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext, api

from engine.errors import BusUnavailable, PublishError, RunMovedOn
from engine.eventlog.port import Appended
from engine.eventlog.stored import record_of, report_unreadable
from engine.nats.client_events import ClientEvents
from engine.nats.jetstream.direct_get import DirectGets
from engine.nats.jetstream.errors import (
    DUPLICATE_IN_PROCESS,
    MISSING_PAYLOAD,
    WRONG_LAST_SEQUENCE,
    LaggingReplica,
    missing,
)
from engine.nats.jetstream.follow import CONSUMER_REQUEST_TIMEOUT_S, RunFollow
from engine.nats.jetstream.payloads import PAYLOAD_HEADER, Payloads, stub
from engine.nats.jetstream.reply_subject import reply_fields
from engine.nats.publisher import PublishRefused, StreamPublisher
from engine.nats.transient import RETRY_FOR_S, is_transient, retrying
from events.base import Event
from events.codec import encode
from events.record import Recorded, Unreadable, excerpt_of
from events.subjects import ALL_RUNS, RUN_PREFIX, run_filter, subject_for, subject_for_tag

_log = structlog.get_logger("apollo.eventlog")

DUPLICATE_IN_PROCESS_WAITS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6)
"""Seconds between re-asks while another append of the same id settles (about 3 s in all)."""
EXPECTED_SEQ = "Nats-Expected-Last-Subject-Sequence"
EXPECTED_SEQ_SUBJECT = "Nats-Expected-Last-Subject-Sequence-Subject"
"""An append's condition: the last sequence among the messages matching this filter."""


class JetStreamEventStore:
    """Events in one JetStream stream, big bodies in the Object Store (the ``EventStore`` port)."""

    def __init__(
        self,
        nc: Client,
        js: JetStreamContext,
        stream: str,
        payloads: Payloads,
        client_events: ClientEvents,
    ) -> None:
        self.nc = nc
        self.js = js
        self.consumer_js = nc.jetstream(timeout=CONSUMER_REQUEST_TIMEOUT_S)
        """Makes the ordered consumers of reads and follows (see ``CONSUMER_REQUEST_TIMEOUT_S``)."""
        self.stream = stream
        self.payloads = payloads
        self.client_events = client_events
        self.publisher = StreamPublisher(nc, timeout=10.0)
        self.direct_gets = DirectGets(nc, stream)

    # -- writing ---------------------------------------------------------------------

    async def append(self, event: Event, *, expected_run_seq: int | None = None) -> Appended:
        """Append one event; with ``expected_run_seq`` only if that is still the run's last.

        Raises:
            RunMovedOn: another event of the run was appended after ``expected_run_seq``.
            PublishError: the server did not acknowledge the append.
        """
        headers = None
        if expected_run_seq is not None:
            headers = {EXPECTED_SEQ: str(expected_run_seq), EXPECTED_SEQ_SUBJECT: run_filter(event.run_id)}
        return await self.append_raw(subject_for(event), encode(event), event.event_id, headers)

    async def append_raw(
        self, subject: str, data: bytes, msg_id: str | None = None, extra: dict[str, str] | None = None
    ) -> Appended:
        """Publish bytes with ``Nats-Msg-Id``; big bodies go to the Object Store first."""
        headers = {"Nats-Msg-Id": msg_id} if msg_id else {}
        headers.update(extra or {})
        if len(data) > self.payloads.inline_limit:
            digest = await self.payloads.put(data)
            headers[PAYLOAD_HEADER] = digest
            data = stub(data, digest)
        for wait in (*DUPLICATE_IN_PROCESS_WAITS, None):
            try:
                seq, duplicate = await self.publisher.publish(subject, data, headers or None)
            except PublishRefused as exc:
                if exc.err_code == WRONG_LAST_SEQUENCE:
                    raise RunMovedOn(exc.description) from exc
                if exc.err_code == DUPLICATE_IN_PROCESS and wait is not None:
                    # Another writer's append of this very id is being replicated: ask
                    # again once it settles, to learn its sequence (or store ours if it failed).
                    await asyncio.sleep(wait)
                    continue
                msg = f"append to {subject} was refused: {exc.description}"
                raise PublishError(msg) from exc
            except (TimeoutError, nats.errors.Error) as exc:
                msg = f"append to {subject} was not acknowledged: {exc or type(exc).__name__}"
                raise PublishError(msg) from exc
            return Appended(seq, duplicate)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def append_many(self, events: Sequence[Event]) -> list[Appended]:
        return [await self.append(event) for event in events]

    # -- reading ---------------------------------------------------------------------

    async def read_run(
        self, run_id: str, *, after_seq: int = 0, upto_seq: int | None = None,
        unreadable: list[Unreadable] | None = None,
    ) -> list[Recorded]:
        return [record async for record in self._direct_read(run_filter(run_id), after_seq, upto_seq, unreadable)]

    async def read_run_tags(
        self, run_id: str, tags: Sequence[str], *, unreadable: list[Unreadable] | None = None
    ) -> list[Recorded]:
        """One batched direct get per type: the run's other messages never cross the wire."""
        records = []
        for tag in dict.fromkeys(tags):
            records += [record async for record in self._direct_read(subject_for_tag(run_id, tag), 0, None, unreadable)]
        return sorted(records, key=lambda record: record.seq)

    async def read_run_from_leader(
        self, run_id: str, *, after_seq: int = 0, unreadable: list[Unreadable] | None = None
    ) -> list[Recorded]:
        """The run's events after ``after_seq``, each fetched from the stream leader.

        Direct gets may be answered by a replica that is behind; the stream API's message
        get is answered by the leader only. One request per event, so it is kept for the
        rare read a replica left short.
        """
        records: list[Recorded] = []
        start = after_seq + 1
        while True:
            try:
                msg = await self.js.get_msg(self.stream, seq=start, subject=run_filter(run_id), next=True)
            except nats.js.errors.NotFoundError:
                return records
            seq = int(msg.seq or start)
            record = await self.stored(seq, msg.subject or "", msg.data or b"", msg.headers, unreadable)
            if record is not None:
                records.append(record)
            start = seq + 1

    async def last_run_seq(self, run_id: str) -> int:
        """One stream API request (answered by the leader, not a replica that may be
        behind) for the last message under the run's subjects."""
        try:
            msg = await self.js.get_last_msg(self.stream, run_filter(run_id))
        except nats.js.errors.NotFoundError:
            return 0
        return int(msg.seq or 0)

    async def read_all(
        self, subject_filter: str | None = None, *, after_seq: int = 0,
        unreadable: list[Unreadable] | None = None,
    ) -> AsyncIterator[Recorded]:
        """Bulk reads go through an ordered push consumer (flow-controlled, no per-batch asks).

        A failover in the middle of a read resumes after the last event handed out, for up
        to ``RETRY_FOR_S`` seconds without progress, then fails with one line.
        """
        resume_after = after_seq
        loop = asyncio.get_running_loop()
        while True:
            started = loop.time()
            try:
                async for record in self._read_all_once(subject_filter, resume_after, unreadable):
                    resume_after = record.seq
                    yield record
                return
            except Exception as exc:
                if not is_transient(exc):
                    raise
                waited = loop.time() - started
                if waited >= RETRY_FOR_S:
                    msg = f"cannot read the stream after sequence {resume_after}: {exc or type(exc).__name__}"
                    raise BusUnavailable(msg) from exc
                _log.info("read_all_resuming", after_seq=resume_after, error=str(exc) or type(exc).__name__)
                await asyncio.sleep(0.5)

    async def _read_all_once(
        self, subject_filter: str | None, after_seq: int, unreadable: list[Unreadable] | None
    ) -> AsyncIterator[Recorded]:
        last = await self.last_seq()
        if after_seq >= last:
            return
        arrived: list[Msg] = []
        wake = asyncio.Event()

        async def collect(msg: Msg) -> None:
            arrived.append(msg)
            wake.set()

        start = api.ConsumerConfig(
            deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=after_seq + 1
        )
        sub = await self.consumer_js.subscribe(
            subject_filter or ALL_RUNS, cb=collect, ordered_consumer=True, config=start,
            stream=self.stream,
        )
        try:
            info = await sub.consumer_info()
            if not info.num_pending and not (info.delivered and info.delivered.consumer_seq):
                await self._unless_leader_has_more(subject_filter, after_seq, last)
                return  # nothing matches after after_seq
            finished = False
            while not finished:
                if not arrived:
                    wake.clear()
                    await asyncio.wait_for(wake.wait(), 30.0)
                    continue
                msgs, arrived[:] = list(arrived), []
                for msg in msgs:
                    seq, _, pending = reply_fields(msg)
                    if seq > last:
                        finished = True
                        break
                    if msg.headers and PAYLOAD_HEADER in msg.headers:
                        record = await self.stored(seq, msg.subject, msg.data, msg.headers, unreadable)
                    else:  # the body is inline: no Object Store to ask, no coroutine per message
                        record = stored_inline(seq, msg.subject, msg.data, unreadable)
                    if record is not None:
                        yield record
                    if seq >= last:
                        finished = True
                        break
                    if pending == 0:
                        await self._unless_leader_has_more(subject_filter, seq, last)
                        finished = True
                        break
        finally:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()

    async def _unless_leader_has_more(self, subject_filter: str | None, seq: int, last: int) -> None:
        """Raise :class:`LaggingReplica` if the leader holds a matching event in (seq, last].

        A read's consumer may be placed on a replica still catching up (after a node
        restarts): its "nothing pending" would end the read short, silently.
        """
        try:
            msg = await self.js.get_msg(self.stream, seq=seq + 1, subject=subject_filter or ALL_RUNS, next=True)
        except nats.js.errors.NotFoundError:
            return
        if int(msg.seq or 0) <= last:
            raise LaggingReplica(f"the replica serving this read is behind the stream leader after sequence {seq}")

    async def _direct_read(
        self, subject_filter: str, after_seq: int, upto_seq: int | None, unreadable: list[Unreadable] | None
    ) -> AsyncIterator[Recorded]:
        """Batched direct gets: one round trip per batch, no consumer to create."""
        start = after_seq + 1
        while True:
            batch = await self.direct_gets.batch(subject_filter, start)
            if not batch:
                return
            for msg in batch:
                seq = int(msg.headers["Nats-Sequence"])
                if upto_seq is not None and seq > upto_seq:
                    return
                record = await self.stored(seq, msg.headers["Nats-Subject"], msg.data, msg.headers, unreadable)
                if record is not None:
                    yield record
                start = seq + 1
            if int(batch[-1].headers.get("Nats-Num-Pending", "0")) == 0:
                return

    async def stored(
        self, seq: int, subject: str, data: bytes, headers: dict[str, str] | None,
        unreadable: list[Unreadable] | None,
    ) -> Recorded | None:
        """The record at ``seq``, or ``None`` (reported when it can never be read).

        An offloaded body that is gone is as unreadable as garbage; a failure to reach the
        Object Store is not, and propagates so the reader tries again.
        """
        try:
            body = await self.payloads.materialize(data, headers)
        except MISSING_PAYLOAD as exc:
            lost = bool((headers or {}).get("Nats-Msg-Id"))
            report_unreadable(Unreadable(seq, subject, missing(exc), lost, excerpt=excerpt_of(data)), unreadable)
            return None
        return stored_inline(seq, subject, body, unreadable)

    async def materialize(self, data: bytes, headers: dict[str, str] | None) -> bytes:
        """The real body of a message: fetched from the Object Store when it is a stub."""
        return await self.payloads.materialize(data, headers)

    async def run_ids(self) -> list[str]:
        info = await retrying(
            lambda: self.js.stream_info(self.stream, subjects_filter=f"{RUN_PREFIX}.*.problem.submitted"),
            doing="list runs",
        )
        subjects = info.state.subjects or {}
        return [subject.split(".")[2] for subject in subjects]

    async def last_seq(self) -> int:
        info = await retrying(lambda: self.js.stream_info(self.stream), doing="read the stream's last sequence")
        return int(info.state.last_seq)

    async def stream_identity(self) -> str:
        """What tells this stream from another of its name: its first message's sequence and a
        digest of its bytes (a stream made again, or purged from the front, is another log).
        The stream's creation time is no use: a server restarted over its store reports a new one."""
        info = await retrying(lambda: self.js.stream_info(self.stream), doing="read the stream's identity")
        if not info.state.messages:
            return f"{self.stream}@empty"
        first = int(info.state.first_seq)
        msg = await retrying(lambda: self.js.get_msg(self.stream, seq=first), doing="read the stream's first message")
        digest = hashlib.sha256((msg.subject or "").encode() + b"\n" + (msg.data or b"")).hexdigest()[:16]
        return f"{self.stream}@{first}:{digest}"

    # -- following -------------------------------------------------------------------

    async def follow(
        self, run_id: str, after: int = 0, *, unreadable: list[Unreadable] | None = None
    ) -> AsyncGenerator[Recorded, None]:
        """The run's events after sequence ``after``, then each one as it is recorded.

        An ordered push consumer delivers them; a reconnect or failover makes a new one
        after the last event handed out (see :class:`RunFollow`). Close the iterator to stop.
        """
        following = RunFollow(self.consumer_js, self.stream, self.client_events, self.stored, run_id, after, unreadable)
        async with contextlib.aclosing(following.records()) as records:  # closed with this iterator, not later
            async for record in records:
                yield record


def stored_inline(seq: int, subject: str, data: bytes, unreadable: list[Unreadable] | None) -> Recorded | None:
    """The record of a message whose body is inline (not offloaded), or ``None`` (reported when
    it can never be read); what :meth:`JetStreamEventStore.stored` does without the Object Store."""
    found = record_of(seq, subject, data)
    if isinstance(found, Unreadable):
        report_unreadable(found, unreadable)
        return None
    return found
