"""The JetStream event log: one stream, KV for bookkeeping, Object Store for big bodies."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any

import nats
import nats.errors
import nats.js.errors
import structlog
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext, api

from engine.errors import (
    AccessDenied,
    BusUnavailable,
    ConnectError,
    EngineError,
    PublishError,
    RunMovedOn,
    StreamSetupError,
)
from engine.eventlog.port import Appended, Delivery
from engine.eventlog.stored import record_of, report_unreadable
from engine.nats.client_events import ClientEvents
from engine.nats.publisher import PublishRefused, StreamPublisher
from engine.nats.pull_consumer import ContinuousPull
from engine.nats.security import ClientSecurity, connect_failure, shown_url
from engine.nats.server import MIN_SERVER_VERSION
from engine.nats.streams import Definitions
from engine.nats.transient import RETRY_FOR_S, is_transient, retrying
from events.base import Event
from events.codec import MAX_BYTES, DecodeError, UnknownEvent, decode, encode
from events.record import Recorded, Unreadable
from events.subjects import ALL_RUNS, RUN_PREFIX, run_filter, subject_for, subject_for_tag

_log = structlog.get_logger("apollo.eventlog")

DEFAULT_CONNECT_TIMEOUT_S = 5.0
"""How long a first connection is tried before a command gives up (``nats.connect_timeout``)."""

PAYLOAD_HEADER = "Apollo-Payload-Sha256"
"""Set on a stub message whose real body lives in the Object Store under this hash."""

_DIRECT_BATCH = 512
HANDLED_BUCKET = "apollo-handled"
WRONG_LAST_SEQUENCE = 10071
"""JetStream's error code for a failed ``Nats-Expected-Last-Subject-Sequence`` check."""
DUPLICATE_IN_PROCESS = 10158
"""JetStream's error code when the same ``Nats-Msg-Id`` is being stored by another append."""
DUPLICATE_IN_PROCESS_WAITS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6)
"""Seconds between re-asks while another append of the same id settles (about 3 s in all)."""
EXPECTED_SEQ = "Nats-Expected-Last-Subject-Sequence"
EXPECTED_SEQ_SUBJECT = "Nats-Expected-Last-Subject-Sequence-Subject"
"""An append's condition: the last sequence among the messages matching this filter."""


class LaggingReplica(EngineError, TimeoutError):
    """A read was served by a replica behind the leader; reading again resumes it (transient)."""


class JetStreamEventLog:
    """Event log on a NATS JetStream server. Build with :meth:`connect`."""

    def __init__(
        self,
        nc: Client,
        js: JetStreamContext,
        definitions: Definitions,
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
        self._handled: Any = None
        self._checkpoints: Any = None
        self._payloads: Any = None
        self._queues: dict[str, JetStreamWorkQueue] = {}
        self._reply_prefix: str | None = None
        self._waiting: dict[str, _PendingBatch] = {}
        self._publisher = StreamPublisher(nc, timeout=10.0)

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
        nc = await _connect_within(url, connect_timeout, name, client_events, security)
        _check_server(nc)
        log = cls(
            nc,
            nc.jetstream(timeout=10.0),
            definitions or Definitions.load(),
            inline_limit=min(inline_limit, nc.max_payload - 64 * 1024),
            max_event_bytes=max_event_bytes,
        )
        try:
            if manage_streams:
                try:
                    await permitted(client_events, retrying(
                        lambda: log._ensure(replicas, ack_wait), doing="apply stream definitions", within=retry_for
                    ))
                except AccessDenied as exc:  # a worker role: an admin applies the definitions
                    if must_manage_streams:
                        msg = f"applying the stream definitions needs the admin role: {exc}"
                        raise AccessDenied(msg) from None
                    _log.info("stream_definitions_left_to_admin", reason=str(exc))
                    manage_streams = False
            if not manage_streams:
                await permitted(client_events, retrying(
                    log._bind, doing=f"open stream {log.stream}", within=retry_for
                ))
        except Exception:
            await nc.close()
            raise
        log._publisher.watch_refusals(client_events)
        return log

    async def _bind(self) -> None:
        """Look up the stream and buckets the engine created; change nothing."""
        buckets = self.definitions.buckets
        try:
            await self.js.stream_info(self.stream)
            self._handled = await self.js.key_value("apollo-handled")
            self._checkpoints = await self.js.key_value("apollo-checkpoints")
            self._payloads = await self.js.object_store(buckets["object_store"][0]["bucket"])
        except nats.js.errors.NotFoundError as exc:
            msg = (
                f"stream {self.stream} or one of its buckets does not exist on this NATS server: "
                "start the engine (`apollo up`) or run `apollo streams ensure`"
            )
            raise StreamSetupError(msg) from exc

    async def _ensure(self, replicas: int | None, ack_wait: float | None = None) -> None:
        try:
            config = self.definitions.stream_config(replicas=replicas)
            try:
                existing = await self.js.stream_info(config.name)
                if replicas is None:  # never shrink a replicated stream (or its buckets) by omission
                    replicas = config.num_replicas = existing.config.num_replicas
                await self.js.update_stream(config)
            except nats.js.errors.NotFoundError:
                await self.js.add_stream(config)
            for spec in self.definitions.consumers:
                consumer = self.definitions.consumer_config(spec["durable_name"])
                if ack_wait:
                    consumer.ack_wait = ack_wait
                await self.js.add_consumer(config.name, consumer)
            buckets = self.definitions.buckets
            kv_specs = {b["bucket"]: b for b in buckets.get("key_value", [])}
            self._handled = await self._kv(kv_specs["apollo-handled"], replicas)
            self._checkpoints = await self._kv(kv_specs["apollo-checkpoints"], replicas)
            store = buckets["object_store"][0]
            self._payloads = await self.js.create_object_store(
                store["bucket"],
                config=api.ObjectStoreConfig(
                    bucket=store["bucket"], description=store.get("description"),
                    replicas=replicas or 1, storage=api.StorageType.FILE,
                )
            )
        except (nats.errors.Error, nats.js.errors.Error, KeyError) as exc:
            msg = f"cannot apply stream definitions: {exc}"
            raise StreamSetupError(msg) from exc

    async def _kv(self, spec: dict[str, Any], replicas: int | None) -> Any:
        return await self.js.create_key_value(
            config=api.KeyValueConfig(
                bucket=spec["bucket"],
                description=spec.get("description"),
                history=spec.get("history", 1),
                ttl=float(spec["ttl_seconds"]) if spec.get("ttl_seconds") else None,
                storage=api.StorageType.FILE,
                replicas=replicas or 1,
            )
        )

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
        if len(data) > self.inline_limit:
            digest = hashlib.sha256(data).hexdigest()
            await self._store_payload(digest, data)
            headers[PAYLOAD_HEADER] = digest
            data = _stub(data, digest)
        for wait in (*DUPLICATE_IN_PROCESS_WAITS, None):
            try:
                seq, duplicate = await self._publisher.publish(subject, data, headers or None)
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

    async def _store_payload(self, digest: str, data: bytes) -> None:
        try:
            await self._payloads.get_info(digest)
        except nats.js.errors.ObjectNotFoundError:
            await self._payloads.put(digest, data)

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
            record = await self._stored(seq, msg.subject or "", msg.data or b"", msg.headers, unreadable)
            if record is not None:
                records.append(record)
            start = seq + 1

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
        sub = await self.js.subscribe(
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
                    seq, pending = _sequence_and_pending(msg)
                    if seq > last:
                        finished = True
                        break
                    record = await self._stored(seq, msg.subject, msg.data, msg.headers, unreadable)
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
            batch = await self._direct_batch(subject_filter, start)
            if not batch:
                return
            for msg in batch:
                seq = int(msg.headers["Nats-Sequence"])
                if upto_seq is not None and seq > upto_seq:
                    return
                record = await self._stored(seq, msg.headers["Nats-Subject"], msg.data, msg.headers, unreadable)
                if record is not None:
                    yield record
                start = seq + 1
            if int(batch[-1].headers.get("Nats-Num-Pending", "0")) == 0:
                return

    async def _direct_batch(self, subject_filter: str, start: int) -> list[Msg]:
        """One batched direct get; replies come back on a shared, multiplexed inbox."""
        replies = await self._reply_queue()
        token = self.nc._nuid.next().decode()  # nats-py's unique-id generator
        batch = _PendingBatch(asyncio.get_running_loop().create_future())
        self._waiting[token] = batch
        try:
            request = {"seq": start, "next_by_subj": subject_filter, "batch": _DIRECT_BATCH}
            await self.nc.publish(
                f"$JS.API.DIRECT.GET.{self.stream}", json.dumps(request).encode(),
                reply=f"{replies}.{token}",
            )
            async with asyncio.timeout(10.0):  # unlike 3.11's wait_for, never drops a cancellation
                await batch.done
            return batch.msgs
        finally:
            self._waiting.pop(token, None)

    async def _reply_queue(self) -> str:
        """Subscribe once to ``<inbox>.*`` and route each reply to its waiting read."""
        if self._reply_prefix is None:
            prefix = self.nc.new_inbox()

            async def route(msg: Msg) -> None:
                batch = self._waiting.get(msg.subject.rsplit(".", 1)[-1])
                if batch is None:
                    return
                status = (msg.headers or {}).get("Status")
                if status:
                    if batch.done.done():
                        return
                    if status in _DIRECT_GET_ENDS:
                        batch.done.set_result(None)
                    else:  # not an answer at all (no responders in a failover): never a short read
                        batch.done.set_exception(_direct_get_failed(status, (msg.headers or {}).get("Description")))
                else:
                    batch.msgs.append(msg)

            await self.nc.subscribe(f"{prefix}.*", cb=route)
            self._reply_prefix = prefix
        return self._reply_prefix

    async def _stored(
        self, seq: int, subject: str, data: bytes, headers: dict[str, str] | None,
        unreadable: list[Unreadable] | None,
    ) -> Recorded | None:
        """The record at ``seq``, or ``None`` (reported when it can never be read).

        An offloaded body that is gone is as unreadable as garbage; a failure to reach the
        Object Store is not, and propagates so the reader tries again.
        """
        try:
            body = await self._materialize(data, headers)
        except MISSING_PAYLOAD as exc:
            found: Recorded | Unreadable | None = Unreadable(seq, subject, _missing(exc))
        else:
            found = record_of(seq, subject, body)
        if isinstance(found, Unreadable):
            report_unreadable(found, unreadable)
            return None
        return found

    async def materialize(self, data: bytes, headers: dict[str, str] | None) -> bytes:
        """The real body of a message: fetched from the Object Store when it is a stub."""
        return await self._materialize(data, headers)

    async def _materialize(self, data: bytes, headers: dict[str, str] | None) -> bytes:
        digest = (headers or {}).get(PAYLOAD_HEADER)
        if not digest:
            return data
        result = await self._payloads.get(digest)
        return bytes(result.data or b"")

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

    # -- work queue ------------------------------------------------------------------

    async def workers_active(self, consumer: str) -> bool:
        """Whether any worker pulls from ``consumer`` (a pull request is open) or holds one
        of its events (busy workers ask for no more): False means no worker is alive."""
        info = await self.js.consumer_info(self.stream, consumer)
        return bool(info.num_waiting or info.num_ack_pending)

    async def work_queue(self, consumer: str) -> JetStreamWorkQueue:
        queue = self._queues.get(consumer)
        if queue is None:
            try:
                await self.js.consumer_info(self.stream, consumer)
            except nats.js.errors.NotFoundError as exc:
                msg = f"consumer {consumer!r} does not exist on stream {self.stream} (apply the stream definitions)"
                raise StreamSetupError(msg) from exc
            puller = ContinuousPull(self.nc, self.stream, consumer)
            await puller.start()
            queue = self._queues[consumer] = JetStreamWorkQueue(self, puller)
        return queue

    # -- bookkeeping -----------------------------------------------------------------

    async def mark_handled(self, key: str) -> None:
        """Record (handler, event) as done; a plain publish into the KV stream, not awaited.

        The record is a second line of defence: the run's history already shows which
        outputs exist. Skipping the round trip keeps it off the hot path.
        """
        await self.nc.publish(f"$KV.{HANDLED_BUCKET}.{_kv_key(key)}", b"1")

    async def was_handled(self, key: str) -> bool:
        try:
            await self._handled.get(_kv_key(key))
        except nats.js.errors.KeyNotFoundError:
            return False
        return True

    async def put_checkpoint(self, name: str, data: bytes) -> None:
        if len(data) > self.inline_limit:
            digest = hashlib.sha256(data).hexdigest()
            await self._store_payload(digest, data)
            data = json.dumps({PAYLOAD_HEADER: digest}).encode()
        await self._checkpoints.put(_kv_key(name), data)

    async def get_checkpoint(self, name: str) -> bytes | None:
        try:
            entry = await self._checkpoints.get(_kv_key(name))
        except nats.js.errors.KeyNotFoundError:
            return None
        data = bytes(entry.value or b"")
        if data.startswith(b'{"' + PAYLOAD_HEADER.encode()):
            digest = json.loads(data)[PAYLOAD_HEADER]
            return await self._materialize(b"", {PAYLOAD_HEADER: digest})
        return data

    def bus_failure(self, exc: BaseException) -> bool | None:
        """NATS errors are the bus's (worth retrying), except an offloaded body that is gone."""
        if isinstance(exc, MISSING_PAYLOAD):
            return False
        if isinstance(exc, (nats.errors.Error, nats.js.errors.Error)):
            return True
        return None

    async def close(self) -> None:
        """Flush what was published, then close (a pending pull would stall a drain)."""
        if self.nc.is_closed:
            return
        for queue in self._queues.values():
            with contextlib.suppress(Exception):
                await queue.release()
        await self._publisher.close()
        with contextlib.suppress(Exception):
            await self.nc.flush(timeout=5)
        await self.nc.close()


async def _connect_within(  # the whole connect's bound
    url: str, timeout: float, name: str, client_events: ClientEvents, security: ClientSecurity | None = None
) -> Client:
    """A connected client, or :class:`ConnectError` after ``timeout`` seconds of trying.

    A refusal no retry can fix (credentials rejected or missing, an untrusted server
    certificate) ends the connect at once, with one line saying what was refused.

    nats-py retries a failed first connect for ever when reconnecting is allowed, and
    reports each attempt through the error callback; here the attempts are counted
    quietly and the whole connect is bounded, so a dead URL ends a command with one line.
    """
    servers = [part.strip() for part in url.split(",") if part.strip()]
    url = shown_url(url)  # the messages below never echo a password written into the URL
    security = security or ClientSecurity()
    options = security.connect_options()  # a bad setting fails before any attempt
    failures: list[BaseException] = []
    client_events.first_connect_failures = failures
    client_events.refused = asyncio.get_running_loop().create_future()
    client_events.is_refusal = lambda exc: connect_failure(exc, url, security) is not None
    nc = Client()
    try:
        await _unless_refused(
            asyncio.wait_for(
                nc.connect(
                    servers,
                    connect_timeout=min(timeout, 5.0),
                    allow_reconnect=True,
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=0.5,
                    name=name,
                    **client_events.callbacks(),
                    **options,
                ),
                timeout,
            ),
            client_events.refused,
        )
    except _Refused as refused:
        with contextlib.suppress(Exception):
            await nc.close()
        raise ConnectError(connect_failure(refused.exc, url, security) or str(refused.exc)) from refused.exc
    except (TimeoutError, OSError, nats.errors.Error) as exc:
        with contextlib.suppress(Exception):
            await nc.close()
        reason = connect_failure_reason(failures[-1] if failures else exc)
        msg = f"cannot reach NATS at {url} within {timeout:g} s: {reason}"
        raise ConnectError(msg) from exc
    finally:
        client_events.first_connect_failures = None
    client_events.client = nc
    if security.tls and not connection_encrypted(nc):
        await nc.close()
        msg = f"NATS at {url} does not offer TLS, but a CA bundle or client certificate is configured"
        raise ConnectError(msg)
    return nc


class _Refused(EngineError):  # carries the server's refusal
    def __init__(self, exc: Any) -> None:
        super().__init__(str(exc))
        self.exc = exc


async def connect_client(
    url: str, *, security: ClientSecurity | None = None, name: str = "apollo",
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_S,
) -> tuple[Client, ClientEvents]:
    """A plain nats-py client connected as the event log connects (credentials, TLS, one-line
    refusals), with its callbacks; for readers that use JetStream directly (a trainer)."""
    client_events = ClientEvents(name)
    nc = await _connect_within(url, connect_timeout, name, client_events, security)
    return nc, client_events


async def permitted(client_events: ClientEvents, attempt: Any) -> None:
    """Await ``attempt``, ending it with :class:`AccessDenied` at the server's first
    permission refusal (the refused JetStream request would otherwise time out and be retried)."""
    refused: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def on_refusal(subject: str) -> bool:
        if refused.done():
            return False
        refused.set_result(subject)
        return True

    client_events.permission_listeners.append(on_refusal)
    try:
        await _unless_refused(attempt, refused)
    except _Refused as exc:
        msg = f"NATS refused this client permission to publish to {exc.exc}"
        raise AccessDenied(msg) from None
    finally:
        client_events.permission_listeners.remove(on_refusal)


async def _unless_refused(attempt: Any, refused: asyncio.Future[Any]) -> None:
    """Await ``attempt``; raise :class:`_Refused` (cancelling it) as soon as ``refused`` is set."""
    task = asyncio.ensure_future(attempt)
    try:
        await asyncio.wait({task, refused}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        task.cancel()
        raise
    if not task.done():
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        raise _Refused(refused.result())
    task.result()


def connection_encrypted(nc: Client) -> bool:
    """Whether this connection runs over TLS (its socket transport carries an SSL object)."""
    writer = getattr(getattr(nc, "_transport", None), "_io_writer", None)  # nats-py exposes no accessor
    inner = getattr(writer, "transport", None)
    return bool(inner is not None and inner.get_extra_info("ssl_object") is not None)


def connect_failure_reason(exc: BaseException) -> str:
    """One line saying why a connection failed (``connection refused``, ``timed out``...)."""
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (is nats-server running there?)"
    if isinstance(exc, TimeoutError | nats.errors.TimeoutError):
        return "no answer (timed out)"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc).strip().splitlines()
    return text[0] if text and text[0] else type(exc).__name__


_DIRECT_GET_ENDS = ("204", "404")
"""Statuses that end a batched direct get: end of batch, or no (more) messages."""


def _direct_get_failed(status: str, description: str | None) -> Exception:
    if status == "503":
        return nats.errors.NoRespondersError()
    return nats.js.errors.APIError(code=int(status) if status.isdigit() else None, description=description)


class _PendingBatch:
    """Replies of one batched direct get, collected by the shared inbox's callback."""

    __slots__ = ("done", "msgs")

    def __init__(self, done: asyncio.Future[None]) -> None:
        self.done = done
        self.msgs: list[Msg] = []


class JetStreamWorkQueue:
    """A durable pull consumer shared by every worker process."""

    def __init__(self, log: JetStreamEventLog, puller: ContinuousPull) -> None:
        self.log = log
        self.puller = puller

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
        seq, deliveries = _sequence_and_deliveries(msg)
        try:
            data = await self.log._materialize(msg.data, msg.headers)
        except MISSING_PAYLOAD as exc:  # gone for good: a rejected event (other errors: try again)
            data, error, event = msg.data, _missing(exc), None
            lost = bool((msg.headers or {}).get("Nats-Msg-Id"))
        else:
            lost = False
            event, error = _decode_or_error(data, self.log.max_event_bytes)
        expected = _expected_run_seq(msg.headers, event)

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


def _check_server(nc: Client) -> None:
    version = nc.connected_server_version
    found = (version.major, version.minor, version.patch)
    if found < MIN_SERVER_VERSION:
        wanted = ".".join(map(str, MIN_SERVER_VERSION))
        msg = (
            f"nats-server {'.'.join(map(str, found))} is too old: apollo needs >= {wanted} "
            "(older servers silently ignore settings the engine uses)"
        )
        raise ConnectError(msg)
    if not nc._server_info.get("jetstream"):  # no public accessor in nats-py
        msg = "the NATS server does not have JetStream enabled (start it with -js)"
        raise ConnectError(msg)


def _expected_run_seq(headers: dict[str, str] | None, event: object) -> int | None:
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


def _sequence_and_pending(msg: Msg) -> tuple[int, int]:
    """Stream sequence and pending count of a consumer's message (bulk reads, per event)."""
    seq, _, pending = _reply_fields(msg)
    return seq, pending


def _sequence_and_deliveries(msg: Msg) -> tuple[int, int]:
    """Stream sequence and delivery count of a consumer's message (every delivery)."""
    seq, delivered, _ = _reply_fields(msg)
    return seq, delivered


def _reply_fields(msg: Msg) -> tuple[int, int, int]:
    """(stream sequence, deliveries, pending) from a JetStream reply subject.

    ``$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<time>.<pending>`` is split
    directly (nats-py's metadata object costs more than the rest of a delivery's
    bookkeeping); other layouts go through nats-py's parser.
    """
    tokens = (msg.reply or "").split(".")
    if len(tokens) == 9 and tokens[0] == "$JS" and tokens[1] == "ACK":
        return int(tokens[5]), int(tokens[4]), int(tokens[8])
    meta = msg.metadata
    return meta.sequence.stream, meta.num_delivered, meta.num_pending


def _stub(data: bytes, digest: str) -> bytes:
    """The small body published in place of a big one."""
    return json.dumps({"payload_sha256": digest, "size": len(data)}).encode()


_KV_KEY = re.compile(r"[-_=.0-9A-Za-z]+")


def _kv_key(key: str) -> str:
    """KV keys allow [-/_=.a-zA-Z0-9]; hash anything else."""
    if len(key) < 200 and _KV_KEY.fullmatch(key):
        return key
    return hashlib.sha256(key.encode()).hexdigest()


def _decode_or_error(data: bytes, max_bytes: int = MAX_BYTES) -> tuple[Event | UnknownEvent | None, str | None]:
    try:
        return decode(data, max_bytes=max_bytes), None
    except DecodeError as exc:
        return None, str(exc)


MISSING_PAYLOAD = (
    nats.js.errors.ObjectNotFoundError,
    nats.js.errors.ObjectDeletedError,
    nats.js.errors.DigestMismatchError,
    nats.js.errors.BadObjectMetaError,
    nats.js.errors.InvalidObjectNameError,
    nats.js.errors.LinkIsABucketError,
    nats.js.errors.BucketNotFoundError,
)
"""Object Store answers meaning an offloaded body can never be read (not a broker hiccup)."""


def _missing(exc: Exception) -> str:
    return f"offloaded body not readable from the object store ({type(exc).__name__}: {exc})"[:300]
