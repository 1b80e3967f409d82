"""The JetStream adapter of ``RolloutSource``: a durable pull consumer of sealed trajectories.

Example::

    async def main() -> None:
        settings = load_settings()  # APOLLO_NATS_URL, and the trainer's APOLLO_NATS_* credentials and CA
        nc, source = await connect_trainer(settings.nats.url, security=ClientSecurity.from_settings(settings.nats))
        sub = RolloutSubscription(source, SubscriptionOptions(group_size=8))
        async for batch in sub:
            ...  # train, save checkpoint with batch.cursor, then:
            await batch.commit()

The consumer is durable, so a restarted trainer with the same ``durable`` name resumes
where the acknowledgements left off; unacknowledged trajectories are redelivered after
``ack_wait``. Trajectories too big to publish inline are fetched from the Object Store
by the source itself, however it was built. A message that can never be read (not a
trajectory, undecodable, its offloaded body gone) is terminated, recorded in
``rejected`` and logged; one whose body cannot be fetched right now goes back for a
later delivery (counted in ``deferred``). None is ever acknowledged as if trained.
"""

from __future__ import annotations

from typing import Any

import nats.errors
import nats.js.errors
import structlog
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext, api

from engine.nats.jetstream import MISSING_PAYLOAD, PAYLOAD_HEADER, connect_client, permitted
from engine.nats.security import ClientSecurity
from engine.nats.streams import Definitions
from events import DecodeError, TrajectorySealed, decode
from events.subjects import SEALED_TRAJECTORIES, STREAM, subject_mismatch

log = structlog.get_logger("apollo.rollout_source")

DEFER_DELAY_S = 5.0
"""How long a trajectory whose offloaded body could not be fetched waits before redelivery."""


class JetStreamDelivery:
    """A fetched message with its decoded trajectory."""

    def __init__(self, msg: Msg, event: TrajectorySealed) -> None:
        self._msg = msg
        self._event = event

    @property
    def event(self) -> TrajectorySealed:
        return self._event

    @property
    def seq(self) -> int:
        return int(self._msg.metadata.sequence.stream)

    @property
    def num_delivered(self) -> int:
        return int(self._msg.metadata.num_delivered)

    async def ack(self) -> None:
        await self._msg.ack()

    async def nak(self) -> None:
        await self._msg.nak()

    async def in_progress(self) -> None:
        await self._msg.in_progress()


class JetStreamRolloutSource:
    """Sealed trajectories from stream ``APOLLO`` through one durable pull consumer."""

    def __init__(
        self, js: JetStreamContext, sub: Any, *, stream: str, durable: str, log: Any = None
    ) -> None:
        self.js = js
        self.log = log
        """A JetStreamEventLog to fetch offloaded bodies through; without one the source
        opens the engine's Object Store bucket itself."""
        self.stream = stream
        self.durable = durable
        self.rejected: list[tuple[int, str]] = []
        """(stream sequence, reason) of messages terminated as unusable."""
        self.deferred = 0
        """Deliveries handed back because an offloaded body could not be fetched right then."""
        self._sub = sub
        self._payloads: Any = None

    @classmethod
    async def create(
        cls,
        js: JetStreamContext,
        *,
        durable: str = "trainer",
        stream: str = STREAM,
        filter_subject: str = SEALED_TRAJECTORIES,
        ack_wait: float = 60.0,
        max_ack_pending: int = 100_000,
        log: Any = None,
    ) -> JetStreamRolloutSource:
        """Create (or bind to) the durable consumer and subscribe to it."""
        config = api.ConsumerConfig(
            name=durable,  # with a name, the create request's subject carries the filter (roles grant it)
            durable_name=durable,
            filter_subject=filter_subject,
            ack_policy=api.AckPolicy.EXPLICIT,
            deliver_policy=api.DeliverPolicy.ALL,
            ack_wait=ack_wait,
            max_ack_pending=max_ack_pending,
            max_deliver=-1,
        )
        await js.add_consumer(stream, config)
        sub = await js.pull_subscribe_bind(durable=durable, stream=stream)
        return cls(js, sub, stream=stream, durable=durable, log=log)

    async def fetch(self, max_messages: int, timeout: float) -> list[JetStreamDelivery]:  # the port waits up to timeout
        """Up to ``max_messages`` trajectories; ``[]`` when none arrive within ``timeout``."""
        try:
            msgs = await self._sub.fetch(max_messages, timeout=max(timeout, 0.001))
        except (TimeoutError, nats.errors.TimeoutError):
            return []
        out: list[JetStreamDelivery] = []
        for msg in msgs:
            delivery = await self._deliver(msg)
            if delivery is not None:
                out.append(delivery)
        return out

    async def ack_floor(self) -> int:
        """Stream sequence at or below which the consumer has everything acknowledged."""
        info = await self.js.consumer_info(self.stream, self.durable)
        return int(info.ack_floor.stream_seq) if info.ack_floor else 0

    async def close(self) -> None:
        await self._sub.unsubscribe()

    async def _deliver(self, msg: Msg) -> JetStreamDelivery | None:
        try:
            body = await self._body(msg)
        except MISSING_PAYLOAD as exc:
            return await self._reject(msg, f"offloaded body not readable ({type(exc).__name__}: {exc})")
        except Exception as exc:  # noqa: BLE001 - the store unreachable for now: deliver it again later
            self.deferred += 1
            log.warning("trajectory_deferred", seq=_seq(msg), error=repr(exc))
            await msg.nak(delay=DEFER_DELAY_S)
            return None
        try:
            event = decode(body)
        except DecodeError as exc:
            return await self._reject(msg, f"undecodable: {exc}")
        if not isinstance(event, TrajectorySealed):
            return await self._reject(msg, f"not a trajectory.sealed event: {type(event).__name__}")
        mismatch = subject_mismatch(msg.subject, event)
        if mismatch is not None:
            return await self._reject(msg, mismatch)
        return JetStreamDelivery(msg, event)

    async def _body(self, msg: Msg) -> bytes:
        """The message's real body: fetched from the Object Store when it is a stub."""
        digest = (msg.headers or {}).get(PAYLOAD_HEADER)
        if not digest:
            return msg.data
        if self.log is not None:
            return await self.log.materialize(msg.data, msg.headers)
        if self._payloads is None:
            self._payloads = await self.js.object_store(_payload_bucket())
        result = await self._payloads.get(digest)
        return bytes(result.data or b"")

    async def _reject(self, msg: Msg, reason: str) -> None:
        seq = _seq(msg)
        self.rejected.append((seq, reason))
        log.error("trajectory_rejected", seq=seq, subject=msg.subject, reason=reason)
        await msg.term()
        return None


async def connect_trainer(
    url: str | None, *, security: ClientSecurity | None = None, durable: str = "trainer", ack_wait: float = 60.0,
    name: str = "apollo-trainer",
) -> tuple[Client, JetStreamRolloutSource]:
    """Connect with the trainer's credentials and TLS, then open its durable consumer.

    Raises:
        ConnectError: NATS unreachable or refusing the credentials or certificate (one line).
        AccessDenied: the role may not create or read this durable consumer.
    """
    nc, client_events = await connect_client(url or "nats://127.0.0.1:4222", security=security, name=name)
    opened: list[JetStreamRolloutSource] = []

    async def open_source() -> None:
        opened.append(await JetStreamRolloutSource.create(nc.jetstream(), durable=durable, ack_wait=ack_wait))

    try:
        await permitted(client_events, open_source())
    except BaseException:
        await nc.close()
        raise
    return nc, opened[0]


def _seq(msg: Msg) -> int:
    return int(msg.metadata.sequence.stream)


def _payload_bucket() -> str:
    """The Object Store bucket the engine offloads big bodies to (its stream definitions)."""
    return str(Definitions.load().buckets["object_store"][0]["bucket"])
