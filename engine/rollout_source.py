"""The JetStream adapter of ``RolloutSource``: a durable pull consumer of sealed trajectories.

Example::

    async def main() -> None:
        nc = await nats.connect("nats://127.0.0.1:4222")
        source = await JetStreamRolloutSource.create(nc.jetstream(), durable="trainer-a")
        sub = RolloutSubscription(source, SubscriptionOptions(group_size=8))
        async for batch in sub:
            ...  # train, save checkpoint with batch.cursor, then:
            await batch.commit()

The consumer is durable, so a restarted trainer with the same ``durable`` name resumes
where the acknowledgements left off; unacknowledged trajectories are redelivered after
``ack_wait``. Undecodable messages are terminated (never redelivered) and recorded in
``rejected``.
"""

from __future__ import annotations

from typing import Any

import nats.errors
import nats.js.errors
from nats.aio.msg import Msg
from nats.js import JetStreamContext, api

from events import TrajectorySealed, decode
from events.subjects import SEALED_TRAJECTORIES, STREAM


async def _decode_message(msg: Msg, log: Any = None) -> Any:
    """The event carried by ``msg``; big bodies are fetched from the Object Store via ``log``."""
    if log is not None:
        return decode(await log.materialize(msg.data, msg.headers))
    return decode(msg.data)


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
        """A JetStreamEventLog, when given, reads Object-Store-offloaded trajectories."""
        self.stream = stream
        self.durable = durable
        self.rejected: list[tuple[int, str]] = []
        """(stream sequence, reason) of messages terminated as unusable."""
        self._sub = sub

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

    async def fetch(self, max_messages: int, timeout: float) -> list[JetStreamDelivery]:  # noqa: ASYNC109 - the port waits up to timeout
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
            event = await _decode_message(msg, self.log)
        except (ValueError, nats.js.errors.Error) as exc:
            return await self._reject(msg, f"undecodable: {exc}")
        if not isinstance(event, TrajectorySealed):
            return await self._reject(msg, f"not a trajectory.sealed event: {type(event).__name__}")
        return JetStreamDelivery(msg, event)

    async def _reject(self, msg: Msg, reason: str) -> None:
        self.rejected.append((int(msg.metadata.sequence.stream), reason))
        await msg.term()
        return None
