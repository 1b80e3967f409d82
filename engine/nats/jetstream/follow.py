"""Following a run as it is recorded: an ordered push consumer, made again after a reconnect.

The server pushes each new message of the run's subjects as it is stored (flow-controlled,
with idle heartbeats); nothing asks again and again. An ordered consumer lives in the
server's memory only, so a restarted server forgets it: after every reconnect the follow
makes a new one that starts right after the last message it handed out.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable

import structlog
from nats.aio.msg import Msg
from nats.js import JetStreamContext, api

from engine.errors import BusUnavailable, EngineError
from engine.nats.client_events import ClientEvents
from engine.nats.jetstream.reply_subject import reply_fields
from engine.nats.transient import RETRY_FOR_S, is_transient
from events.record import Recorded, Unreadable
from events.subjects import run_filter

_log = structlog.get_logger("apollo.eventlog")

FOLLOW_HEARTBEAT_S = 2.0
"""The consumer's idle heartbeat: nats-py makes a consumer silent for two of these again
(one a failover moved away without this client reconnecting)."""
CONSUMER_REQUEST_TIMEOUT_S = 3.0
"""How long one request to make a read's or a follow's ordered consumer waits for its answer. Made in
milliseconds when the cluster is whole; after a node is SIGKILLed the cluster keeps placing some new consumers
on the dead node for a while (measured: about half the requests, for over 20 s, each unanswered), so short
requests tried again and again find a live node within seconds, where 10 s requests could fail four times in a
row and give up."""
RESUME_WAIT_S = 0.5
"""Between tries to make the consumer again while JetStream is not answering."""

Stored = Callable[[int, str, bytes, "dict[str, str] | None", "list[Unreadable] | None"], Awaitable["Recorded | None"]]
"""The event store's reading of one message (offloaded bodies fetched, unreadable ones reported)."""


class _Reconnected(EngineError):  # a signal from the reconnect callback to the reader
    """The connection was made again: the server may have forgotten the consumer."""


class RunFollow:
    """One follow of one run.

    ``after`` is the last sequence handed out or skipped as unreadable, so a consumer made
    again starts right after it: no event is lost or handed out twice.
    """

    def __init__(
        self, js: JetStreamContext, stream: str, client_events: ClientEvents, stored: Stored,
        run_id: str, after: int, unreadable: list[Unreadable] | None,
    ) -> None:
        self.js = js
        self.stream = stream
        self.client_events = client_events
        self.stored = stored
        self.run_id = run_id
        self.after = after
        self.unreadable = unreadable
        self.failing_since: float | None = None
        """When the consumer could last not be made, while it still cannot (else ``None``)."""

    async def records(self) -> AsyncGenerator[Recorded, None]:
        """Every event after ``after``, for as long as the caller iterates.

        Transient errors (a failover, a restart) are retried for up to ``RETRY_FOR_S``
        seconds without a consumer, then fail with :class:`BusUnavailable`.
        """
        loop = asyncio.get_running_loop()
        while True:
            try:
                async with contextlib.aclosing(self._once()) as records:  # its consumer goes with it
                    async for record in records:
                        yield record
            except _Reconnected:
                _log.info("follow_resubscribing", run_id=self.run_id, after_seq=self.after)
            except Exception as exc:
                if not is_transient(exc):
                    raise
                now = loop.time()
                if self.failing_since is None:
                    self.failing_since = now
                elif now - self.failing_since >= RETRY_FOR_S:
                    msg = f"cannot follow run {self.run_id} after sequence {self.after}: {exc or type(exc).__name__}"
                    raise BusUnavailable(msg) from exc
                _log.info("follow_resuming", run_id=self.run_id, after_seq=self.after,
                          error=str(exc) or type(exc).__name__)
                await asyncio.sleep(RESUME_WAIT_S)

    async def _once(self) -> AsyncGenerator[Recorded, None]:
        """One consumer's deliveries; ends by raising (a reconnect, an error) or by the caller."""
        arrived: asyncio.Queue[Msg | None] = asyncio.Queue()  # None: the connection was made again

        async def collect(msg: Msg) -> None:
            arrived.put_nowait(msg)

        def reconnected() -> None:
            arrived.put_nowait(None)

        self.client_events.reconnect_listeners.append(reconnected)
        try:
            start = api.ConsumerConfig(
                deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=self.after + 1
            )
            sub = await self.js.subscribe(
                run_filter(self.run_id), cb=collect, ordered_consumer=True, config=start,
                idle_heartbeat=FOLLOW_HEARTBEAT_S, stream=self.stream,
            )
            self.failing_since = None
            try:
                while True:
                    msg = await arrived.get()
                    if msg is None:
                        raise _Reconnected
                    seq, _, _ = reply_fields(msg)
                    if seq <= self.after:
                        continue  # a consumer nats-py reset may deliver one again
                    record = await self.stored(seq, msg.subject, msg.data, msg.headers, self.unreadable)
                    self.after = seq
                    if record is not None:
                        yield record
            finally:
                with contextlib.suppress(Exception):
                    await sub.unsubscribe()
        finally:
            self.client_events.reconnect_listeners.remove(reconnected)
