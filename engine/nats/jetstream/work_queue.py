"""The work queue port: the durable consumer every worker pulls from, as deliveries."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import nats.js.errors
import structlog
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext, api

from engine.errors import StreamSetupError
from engine.eventlog.port import Delivery
from engine.eventlog.subject_match import filter_covers
from engine.nats.jetstream.errors import MISSING_PAYLOAD, missing
from engine.nats.jetstream.event_store import EXPECTED_SEQ, EXPECTED_SEQ_SUBJECT
from engine.nats.jetstream.payloads import Payloads
from engine.nats.jetstream.reply_subject import reply_fields
from engine.nats.pull_consumer import ContinuousPull
from events.base import Event
from events.codec import MAX_BYTES, DecodeError, UnknownEvent, decode
from events.subjects import ALL_RUNS, run_filter, type_filter

_log = structlog.get_logger("apollo.eventlog")


class WorkQueues:
    """The work consumers this connection pulls from, one puller each (the ``WorkSource`` port)."""

    def __init__(
        self, nc: Client, js: JetStreamContext, stream: str, payloads: Payloads, *, max_event_bytes: int
    ) -> None:
        self.nc = nc
        self.js = js
        self.stream = stream
        self.payloads = payloads
        self.max_event_bytes = max_event_bytes
        self._queues: dict[str, JetStreamWorkQueue] = {}

    async def work_queue(self, consumer: str, tags: Sequence[str] | None = None) -> JetStreamWorkQueue:
        queue = self._queues.get(consumer)
        if queue is None:
            try:
                info = await self.js.consumer_info(self.stream, consumer)
            except nats.js.errors.NotFoundError as exc:
                msg = f"consumer {consumer!r} does not exist on stream {self.stream} (apply the stream definitions)"
                raise StreamSetupError(msg) from exc
            await self._cover(info.config, [ALL_RUNS] if tags is None else [type_filter(tag) for tag in tags])
            puller = ContinuousPull(self.nc, self.stream, consumer)
            await puller.start()
            queue = self._queues[consumer] = JetStreamWorkQueue(self.payloads, puller, self.max_event_bytes)
        return queue

    async def _cover(self, config: api.ConsumerConfig, wanted: list[str]) -> None:
        """Widen the consumer's filter to every subject in ``wanted`` it leaves out.

        The definitions filter it to the events an effect reacts to; a worker whose routes
        need more (a newer version, a test's own table) must still receive them.
        """
        current = filters_of(config)
        missing = [subject for subject in wanted if not filter_covers(current, subject)]
        if not missing:
            return
        _log.info("work_filter_widened", consumer=config.durable_name, added=missing)
        # The server refuses overlapping filters: a wider subject replaces those it covers.
        kept = [subject for subject in current if not filter_covers(missing, subject)]
        widened = config.evolve(filter_subject=None, filter_subjects=[*kept, *missing])
        try:
            await self.js.add_consumer(self.stream, widened)
        except nats.js.errors.Error as exc:
            msg = (f"consumer {config.durable_name!r} does not deliver {', '.join(missing)}, which this worker "
                   f"handles, and widening its filter failed: {exc} (apply the stream definitions)")
            raise StreamSetupError(msg) from exc

    async def workers_active(self, consumer: str) -> bool:
        """Whether any worker pulls from ``consumer`` (a pull request is open) or holds one
        of its events (busy workers ask for no more): False means no worker is alive."""
        info = await self.js.consumer_info(self.stream, consumer)
        return bool(info.num_waiting or info.num_ack_pending)

    async def release(self) -> None:
        """Stop every puller; what they hold goes back for redelivery (closing the log)."""
        for queue in self._queues.values():
            with contextlib.suppress(Exception):
                await queue.release()


class JetStreamWorkQueue:
    """A durable pull consumer shared by every worker process."""

    def __init__(self, payloads: Payloads, puller: ContinuousPull, max_event_bytes: int = MAX_BYTES) -> None:
        self.payloads = payloads
        self.puller = puller
        self.max_event_bytes = max_event_bytes

    async def pull(self, batch: int, timeout: float) -> list[Delivery]:
        """Deliveries of the messages taken; one that cannot be prepared now goes back
        (nak) by itself, never failing the others of its batch."""
        deliveries = []
        for msg in await self.puller.take(batch, timeout):
            try:
                deliveries.append(await self._delivery(msg))
            except Exception as exc:  # noqa: BLE001 - e.g. the Object Store unreachable for a moment
                _log.warning("delivery_deferred", subject=msg.subject, error=repr(exc))
                with contextlib.suppress(Exception):
                    await msg.nak(delay=1.0)
        return deliveries

    async def release(self) -> None:
        """Stop pulling; messages received but not handed out go back for redelivery now."""
        for msg in await self.puller.stop():
            with contextlib.suppress(Exception):
                await msg.nak()

    async def _delivery(self, msg: Msg) -> Delivery:
        seq, deliveries, _ = reply_fields(msg)
        try:
            data = await self.payloads.materialize(msg.data, msg.headers)
        except MISSING_PAYLOAD as exc:  # gone for good: a rejected event (other errors: try again)
            data, error, event = msg.data, missing(exc), None
            lost = bool((msg.headers or {}).get("Nats-Msg-Id"))
        else:
            lost = False
            event, error = _decode_or_error(data, self.max_event_bytes)
        expected = expected_run_seq(msg.headers, event)

        async def nak(delay: float | None = None) -> None:
            await msg.nak(delay=delay)

        return Delivery(
            seq=seq,
            subject=msg.subject,
            deliveries=deliveries,
            event=event,
            error=error,
            raw=data,
            _ack=msg.ack,
            _nak=nak,
            _term=msg.term,
            _progress=msg.in_progress,
            expected_run_seq=expected,
            lost=lost,
        )


def filters_of(config: api.ConsumerConfig) -> list[str]:
    """A consumer's filter subjects, whichever of the two fields holds them (none: everything)."""
    if config.filter_subjects:
        return list(config.filter_subjects)
    return [config.filter_subject] if config.filter_subject else [">"]


def expected_run_seq(headers: dict[str, str] | None, event: object) -> int | None:
    """The condition the append of a delivered event had on its own run, if any.

    The server stored the message only because the condition held, so ``0`` proves the
    event opened its run. A condition on any other subject filter says nothing here.
    """
    if not headers or not isinstance(event, Event) or headers.get(EXPECTED_SEQ_SUBJECT) != run_filter(event.run_id):
        return None
    try:
        return int(headers.get(EXPECTED_SEQ, ""))
    except ValueError:
        return None


def _decode_or_error(data: bytes, max_bytes: int = MAX_BYTES) -> tuple[Event | UnknownEvent | None, str | None]:
    try:
        return decode(data, max_bytes=max_bytes), None
    except DecodeError as exc:
        return None, str(exc)
