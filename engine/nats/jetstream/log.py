"""The JetStream event log: one connection, and each port the engine asks of it.

The ports live in their own modules (event store, work queue, handled marks, checkpoints);
this class connects, sets up the stream and buckets, and hands each call to its port.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Sequence

from nats.aio.client import Client
from nats.js import JetStreamContext

from engine.eventlog.port import Appended
from engine.nats.client_events import ClientEvents
from engine.nats.jetstream.checkpoints import JetStreamCheckpoints
from engine.nats.jetstream.connection import DEFAULT_CONNECT_TIMEOUT_S, check_server, connect_within
from engine.nats.jetstream.errors import bus_failure
from engine.nats.jetstream.event_store import JetStreamEventStore
from engine.nats.jetstream.marks import JetStreamHandledMarks
from engine.nats.jetstream.payloads import Payloads
from engine.nats.jetstream.setup import Buckets, open_buckets
from engine.nats.jetstream.work_queue import JetStreamWorkQueue, WorkQueues
from engine.nats.security import ClientSecurity
from engine.nats.streams import Definitions
from engine.nats.transient import RETRY_FOR_S
from events.base import Event
from events.record import Recorded, Unreadable


class JetStreamEventLog:
    """Event log on a NATS JetStream server. Build with :meth:`connect`."""

    def __init__(
        self,
        nc: Client,
        js: JetStreamContext,
        definitions: Definitions,
        buckets: Buckets,
        client_events: ClientEvents,
        *,
        inline_limit: int,
        max_event_bytes: int,
    ) -> None:
        self.nc = nc
        self.js = js
        self.definitions = definitions
        self.inline_limit = inline_limit
        self.max_event_bytes = max_event_bytes
        self.stream = definitions.stream["name"]
        self.payloads = Payloads(buckets.payloads, inline_limit=inline_limit)
        self.events = JetStreamEventStore(nc, js, self.stream, self.payloads, client_events)
        self.work = WorkQueues(nc, js, self.stream, self.payloads, max_event_bytes=max_event_bytes)
        self.marks = JetStreamHandledMarks(nc, buckets.handled)
        self.checkpoints = JetStreamCheckpoints(buckets.checkpoints, self.payloads)

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        definitions: Definitions | None = None,
        inline_limit: int = 256 * 1024,
        max_event_bytes: int = 8 * 1024 * 1024,
        replicas: int | None = None,
        ack_wait: float | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_S,
        name: str = "apollo",
        manage_streams: bool = True,
        retry_for: float = RETRY_FOR_S,
        security: ClientSecurity | None = None,
        must_manage_streams: bool = False,
    ) -> JetStreamEventLog:
        """Connect, check the server, and apply stream/consumer/bucket definitions.

        The first connection is tried (every server of ``url``, again and again) for at
        most ``connect_timeout`` seconds in all; an unreachable URL then raises
        :class:`ConnectError` naming it and the last reason. Once connected, a lost
        connection is reconnected without limit.

        With ``manage_streams=False`` (clients that only submit or read) the stream and
        buckets are only looked up, never created or updated; a role the server does not
        let manage them leaves them to the admin, unless ``must_manage_streams`` (`apollo
        streams ensure`), where that refusal is the error. Either way, transient
        JetStream errors (a failover) are retried for up to ``retry_for`` seconds.
        """
        client_events = ClientEvents(name)
        nc = await connect_within(url, connect_timeout, name, client_events, security)
        check_server(nc)
        js = nc.jetstream(timeout=10.0)
        definitions = definitions or Definitions.load()
        try:
            buckets = await open_buckets(
                js, definitions, client_events, manage_streams=manage_streams,
                must_manage_streams=must_manage_streams, replicas=replicas, ack_wait=ack_wait, retry_for=retry_for,
            )
        except Exception:
            await nc.close()
            raise
        log = cls(
            nc, js, definitions, buckets, client_events,
            inline_limit=min(inline_limit, nc.max_payload - 64 * 1024), max_event_bytes=max_event_bytes,
        )
        log.events.publisher.watch_refusals(client_events)
        return log

    # -- the event store -------------------------------------------------------------

    async def append(self, event: Event, *, expected_run_seq: int | None = None) -> Appended:
        return await self.events.append(event, expected_run_seq=expected_run_seq)

    async def append_raw(
        self, subject: str, data: bytes, msg_id: str | None = None, extra: dict[str, str] | None = None
    ) -> Appended:
        """Publish bytes as they are (tests of foreign or hostile input)."""
        return await self.events.append_raw(subject, data, msg_id, extra)

    async def append_many(self, events: Sequence[Event]) -> list[Appended]:
        return await self.events.append_many(events)

    async def read_run(
        self, run_id: str, *, after_seq: int = 0, upto_seq: int | None = None,
        unreadable: list[Unreadable] | None = None,
    ) -> list[Recorded]:
        return await self.events.read_run(run_id, after_seq=after_seq, upto_seq=upto_seq, unreadable=unreadable)

    async def read_run_tags(
        self, run_id: str, tags: Sequence[str], *, unreadable: list[Unreadable] | None = None
    ) -> list[Recorded]:
        return await self.events.read_run_tags(run_id, tags, unreadable=unreadable)

    async def read_run_from_leader(
        self, run_id: str, *, after_seq: int = 0, unreadable: list[Unreadable] | None = None
    ) -> list[Recorded]:
        return await self.events.read_run_from_leader(run_id, after_seq=after_seq, unreadable=unreadable)

    async def last_run_seq(self, run_id: str) -> int:
        return await self.events.last_run_seq(run_id)

    def read_all(
        self, subject_filter: str | None = None, *, after_seq: int = 0,
        unreadable: list[Unreadable] | None = None,
    ) -> AsyncIterator[Recorded]:
        return self.events.read_all(subject_filter, after_seq=after_seq, unreadable=unreadable)

    def follow(
        self, run_id: str, after: int = 0, *, unreadable: list[Unreadable] | None = None
    ) -> AsyncGenerator[Recorded, None]:
        return self.events.follow(run_id, after, unreadable=unreadable)

    async def materialize(self, data: bytes, headers: dict[str, str] | None) -> bytes:
        """The real body of a message: fetched from the Object Store when it is a stub."""
        return await self.payloads.materialize(data, headers)

    async def run_ids(self) -> list[str]:
        return await self.events.run_ids()

    async def last_seq(self) -> int:
        return await self.events.last_seq()

    async def stream_identity(self) -> str:
        return await self.events.stream_identity()

    def bus_failure(self, exc: BaseException) -> bool | None:
        return bus_failure(exc)

    # -- the work queue, handled marks and checkpoints -------------------------------

    async def work_queue(self, consumer: str, tags: Sequence[str] | None = None) -> JetStreamWorkQueue:
        return await self.work.work_queue(consumer, tags)

    async def workers_active(self, consumer: str) -> bool:
        return await self.work.workers_active(consumer)

    async def mark_handled(self, key: str) -> None:
        await self.marks.mark_handled(key)

    async def was_handled(self, key: str) -> bool:
        return await self.marks.was_handled(key)

    async def put_checkpoint(self, name: str, data: bytes) -> None:
        await self.checkpoints.put_checkpoint(name, data)

    async def get_checkpoint(self, name: str) -> bytes | None:
        return await self.checkpoints.get_checkpoint(name)

    async def close(self) -> None:
        """Flush what was published, then close (a pending pull would stall a drain)."""
        if self.nc.is_closed:
            return
        await self.work.release()
        await self.events.publisher.close()
        with contextlib.suppress(Exception):
            await self.nc.flush(timeout=5)
        await self.nc.close()
