"""The event log contract shared by the JetStream adapter and the in-memory fake."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from events.base import Event
from events.codec import UnknownEvent
from events.record import Recorded, Unreadable


@dataclass(frozen=True)
class Appended:
    """Where an append landed; ``duplicate`` when the event id was already stored."""

    seq: int
    duplicate: bool


@dataclass
class Delivery:
    """One message handed to a worker by a durable consumer.

    Exactly one of ``event`` / ``error`` is set: ``error`` says why the bytes could
    not be decoded (malformed JSON, missing fields, oversized...).
    """

    seq: int
    subject: str
    deliveries: int
    event: Event | UnknownEvent | None
    error: str | None
    raw: bytes
    _ack: object
    _nak: object
    _term: object
    _progress: object
    expected_run_seq: int | None = None
    """The run's last sequence its append was conditioned on (stored with the message),
    when the append had that condition on this event's own run: 0 means the event
    opened its run."""
    lost: bool = False
    """An engine-written event (it carries a message id) whose offloaded body is gone for
    good: its run can never have it, so a run still going cannot go on."""

    async def ack(self) -> None:
        await self._ack()  # type: ignore[operator]

    async def nak(self, delay: float | None = None) -> None:
        await self._nak(delay)  # type: ignore[operator]

    async def term(self) -> None:
        await self._term()  # type: ignore[operator]

    async def in_progress(self) -> None:
        await self._progress()  # type: ignore[operator]


class WorkQueue(Protocol):
    """Pulls deliveries from a durable consumer."""

    async def pull(self, batch: int, timeout: float) -> list[Delivery]:
        """Up to ``batch`` deliveries, waiting at most ``timeout`` seconds for the first."""
        ...


class EventStore(Protocol):
    """Append-only, ordered, deduplicated storage of events: what readers need."""

    async def append(self, event: Event, *, expected_run_seq: int | None = None) -> Appended:
        """Store one event; an already stored ``event_id`` is not stored twice.

        With ``expected_run_seq``, store it only if that is still the run's last sequence
        (else raise ``RunMovedOn``): how a worker knows its cached history has no gap.
        """
        ...

    async def append_many(self, events: Sequence[Event]) -> list[Appended]:
        """Store several events in order."""
        ...

    async def read_run(
        self, run_id: str, *, after_seq: int = 0, upto_seq: int | None = None,
        unreadable: list[Unreadable] | None = None,
    ) -> list[Recorded]:
        """A run's events in stream order, optionally a window of sequences.

        Messages that can never be read as an event of their subject (undecodable, an
        offloaded body that is gone, a body naming another run or type) are skipped and
        added to ``unreadable`` (logged when it is ``None``); a read never fails on one.
        """
        ...

    async def read_run_tags(
        self, run_id: str, tags: Sequence[str], *, unreadable: list[Unreadable] | None = None
    ) -> list[Recorded]:
        """A run's events of the types ``tags`` only, in stream order; the others are not read."""
        ...

    async def read_run_from_leader(
        self, run_id: str, *, after_seq: int = 0, unreadable: list[Unreadable] | None = None
    ) -> list[Recorded]:
        """Like :meth:`read_run`, but answered by the stream's leader, never a replica
        that may be behind: slower, for when a read must include what is known stored."""
        ...

    async def last_run_seq(self, run_id: str) -> int:
        """The sequence of the run's last recorded event (0 when it has none), as the
        stream's leader knows it: a read reaching it holds everything recorded so far."""
        ...

    def read_all(
        self, subject_filter: str | None = None, *, after_seq: int = 0,
        unreadable: list[Unreadable] | None = None,
    ) -> AsyncIterator[Recorded]:
        """Every event (optionally matching a subject filter) from ``after_seq`` on;
        unreadable messages are skipped as :meth:`read_run` does."""
        ...

    def follow(
        self, run_id: str, after: int = 0, *, unreadable: list[Unreadable] | None = None
    ) -> AsyncGenerator[Recorded, None]:
        """A run's events after sequence ``after`` in stream order, then each new one as it
        is recorded, for as long as the caller iterates; close the iterator to stop.

        No event is handed out twice or left out, through reconnects and failovers too
        (a bus that stays away ends it with ``BusUnavailable``). Unreadable messages are
        skipped as :meth:`read_run` does, each reported once.
        """
        ...

    async def run_ids(self) -> list[str]:
        """Ids of every run that has a submission recorded."""
        ...

    async def last_seq(self) -> int:
        """The stream's last sequence (0 when empty)."""
        ...

    def bus_failure(self, exc: BaseException) -> bool | None:
        """How this store's own errors count: ``True`` a failure of the bus or network
        (retrying may help), ``False`` one that stays (an offloaded body that is gone),
        ``None`` not an error of this store. Wire errors stay behind the adapter."""
        ...

    async def close(self) -> None:
        ...


class WorkSource(Protocol):
    """Where workers pull the events to handle."""

    async def work_queue(self, consumer: str, tags: Sequence[str] | None = None) -> WorkQueue:
        """The durable work consumer ``consumer`` shared by every worker (at-least-once).

        ``tags``: the event types this worker needs delivered (``None``: every event). A
        consumer whose filter leaves one of them out is widened to take it.
        """
        ...


class HandledMarks(Protocol):
    """Exactly-once bookkeeping: which handler finished which event."""

    async def mark_handled(self, key: str) -> None:
        """Remember that a handler finished an event."""
        ...

    async def was_handled(self, key: str) -> bool:
        ...


class CheckpointStore(Protocol):
    """Projection checkpoints (state plus last sequence)."""

    async def put_checkpoint(self, name: str, data: bytes) -> None:
        """Store a projection checkpoint."""
        ...

    async def get_checkpoint(self, name: str) -> bytes | None:
        ...


class EventLog(EventStore, WorkSource, HandledMarks, CheckpointStore, Protocol):
    """Everything a worker needs from the log; readers take the narrower :class:`EventStore`,
    projectors a :class:`CheckpointStore`. Each has an in-memory fake in
    :mod:`engine.eventlog.memory`."""
