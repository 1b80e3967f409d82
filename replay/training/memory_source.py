"""An in-memory ``RolloutSource`` with JetStream's ack semantics, for tests and local runs.

Unacknowledged deliveries come back after ``ack_wait`` (``in_progress`` restarts the
clock; ``nak`` makes them due at once). ``expire()`` simulates the ack wait running out,
e.g. after a trainer was killed; ``lose_acks`` simulates acknowledgements that never
reach the server.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable

from events import TrajectorySealed


class InMemoryDelivery:
    """One delivery of a stored trajectory."""

    def __init__(self, source: InMemoryRolloutSource, seq: int, event: TrajectorySealed) -> None:
        self._source = source
        self._seq = seq
        self._event = event

    @property
    def event(self) -> TrajectorySealed:
        return self._event

    @property
    def seq(self) -> int:
        return self._seq

    async def ack(self) -> None:
        self._source._ack(self._seq)

    async def nak(self) -> None:
        self._source._due[self._seq] = 0.0

    async def in_progress(self) -> None:
        if self._seq in self._source._due:
            self._source._due[self._seq] = self._source._clock() + self._source.ack_wait


class InMemoryRolloutSource:
    """A durable consumer over a list of trajectories, shared across subscriptions."""

    def __init__(
        self,
        events: Iterable[TrajectorySealed] = (),
        *,
        ack_wait: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ack_wait = ack_wait
        self.lose_acks = False
        self.acked: set[int] = set()
        self.deliveries: dict[int, int] = {}
        """Sequence -> number of times delivered."""
        self._clock = clock
        self._log: dict[int, TrajectorySealed] = {}
        self._due: dict[int, float] = {}
        """In flight: sequence -> when it becomes due for redelivery."""
        self._arrived = asyncio.Event()
        for event in events:
            self.publish(event)

    def publish(self, event: TrajectorySealed) -> int:
        """Append one trajectory; returns its sequence."""
        seq = len(self._log) + 1
        self._log[seq] = event
        self._arrived.set()
        return seq

    def expire(self) -> None:
        """Every in-flight delivery becomes due for redelivery now."""
        for seq in self._due:
            self._due[seq] = 0.0

    def ack_floor(self) -> int:
        """Highest sequence at or below which everything is acknowledged."""
        floor = 0
        while floor + 1 in self.acked:
            floor += 1
        return floor

    @property
    def unacked(self) -> list[int]:
        return [s for s in self._log if s not in self.acked]

    async def fetch(self, max_messages: int, timeout: float) -> list[InMemoryDelivery]:  # the port waits up to timeout
        """Due deliveries in sequence order, waiting up to ``timeout`` for new ones."""
        batch = self._take(max_messages)
        if batch or timeout <= 0:
            return batch
        self._arrived.clear()
        try:
            await asyncio.wait_for(self._arrived.wait(), timeout)
        except TimeoutError:
            return []
        return self._take(max_messages)

    def _take(self, max_messages: int) -> list[InMemoryDelivery]:
        now = self._clock()
        out: list[InMemoryDelivery] = []
        for seq, event in self._log.items():
            if len(out) >= max_messages:
                break
            if seq in self.acked or self._due.get(seq, 0.0) > now:
                continue
            self._due[seq] = now + self.ack_wait
            self.deliveries[seq] = self.deliveries.get(seq, 0) + 1
            out.append(InMemoryDelivery(self, seq, event))
        return out

    def _ack(self, seq: int) -> None:
        if self.lose_acks:
            return
        self.acked.add(seq)
        self._due.pop(seq, None)
