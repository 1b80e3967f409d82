"""An in-memory event log with the same contract as the JetStream one (tests, local replay)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Sequence

from engine.errors import RunMovedOn
from engine.eventlog.port import Appended, Delivery
from engine.eventlog.stored import record_of, report_unreadable
from engine.eventlog.subject_match import filter_covers, subject_matches
from events.base import Event
from events.codec import DecodeError, UnknownEvent, decode, encode
from events.record import Recorded, Unreadable
from events.subjects import ALL_RUNS, parse_subject, subject_for, type_filter


class InMemoryEventLog:
    """Keeps encoded events in a list; decoding on read mirrors the real log."""

    def __init__(self, *, max_deliver: int = -1) -> None:
        self._messages: list[tuple[str, bytes]] = []
        self._ids: dict[str, int] = {}
        self._conditions: dict[int, int] = {}
        """seq -> the run's last sequence its append expected (as JetStream stores it)."""
        self._handled: set[str] = set()
        self._checkpoints: dict[str, bytes] = {}
        self._consumers: dict[str, _Consumer] = {}
        self._new_message = asyncio.Condition()
        self.max_deliver = max_deliver

    async def append(self, event: Event, *, expected_run_seq: int | None = None) -> Appended:
        existing = self._ids.get(event.event_id)
        if existing is not None:
            return Appended(existing, duplicate=True)
        if expected_run_seq is not None:
            last = self._last_run_seq(event.run_id)
            if last != expected_run_seq:
                msg = f"wrong last sequence: {last}"
                raise RunMovedOn(msg)
        appended = await self.append_raw(subject_for(event), encode(event), event.event_id)
        if expected_run_seq is not None:
            self._conditions[appended.seq] = expected_run_seq
        return appended

    def _last_run_seq(self, run_id: str) -> int:
        for seq in range(len(self._messages), 0, -1):
            parsed = parse_subject(self._messages[seq - 1][0])
            if parsed is not None and parsed[0] == run_id:
                return seq
        return 0

    async def append_raw(self, subject: str, data: bytes, msg_id: str | None = None) -> Appended:
        """Store raw bytes as a foreign client would publish them (tests of bad input)."""
        if msg_id is not None and msg_id in self._ids:
            return Appended(self._ids[msg_id], duplicate=True)
        self._messages.append((subject, data))
        seq = len(self._messages)
        if msg_id is not None:
            self._ids[msg_id] = seq
        async with self._new_message:
            self._new_message.notify_all()
        return Appended(seq, duplicate=False)

    async def append_many(self, events: Sequence[Event]) -> list[Appended]:
        return [await self.append(event) for event in events]

    async def read_run(
        self, run_id: str, *, after_seq: int = 0, upto_seq: int | None = None,
        unreadable: list[Unreadable] | None = None,
    ) -> list[Recorded]:
        records = []
        for seq in range(after_seq + 1, (upto_seq or len(self._messages)) + 1):
            subject, data = self._messages[seq - 1]
            parsed = parse_subject(subject)
            if parsed is None or parsed[0] != run_id:
                continue
            record = _decode_record(seq, subject, data, unreadable)
            if record is not None:
                records.append(record)
        return records

    async def read_run_tags(
        self, run_id: str, tags: Sequence[str], *, unreadable: list[Unreadable] | None = None
    ) -> list[Recorded]:
        wanted = {(run_id, tag) for tag in tags}
        records = []
        for seq, (subject, data) in enumerate(self._messages, 1):
            if parse_subject(subject) in wanted:
                record = _decode_record(seq, subject, data, unreadable)
                if record is not None:
                    records.append(record)
        return records

    async def read_run_from_leader(
        self, run_id: str, *, after_seq: int = 0, unreadable: list[Unreadable] | None = None
    ) -> list[Recorded]:
        """One process holds the only copy: every read is current (even where a test
        overrides :meth:`read_run` to make replicas lag)."""
        return await InMemoryEventLog.read_run(self, run_id, after_seq=after_seq, unreadable=unreadable)

    async def last_run_seq(self, run_id: str) -> int:
        return self._last_run_seq(run_id)

    async def read_all(
        self, subject_filter: str | None = None, *, after_seq: int = 0,
        unreadable: list[Unreadable] | None = None,
    ) -> AsyncIterator[Recorded]:
        pattern = subject_filter or ALL_RUNS
        for seq in range(after_seq + 1, len(self._messages) + 1):
            subject, data = self._messages[seq - 1]
            if subject_matches(pattern, subject):
                record = _decode_record(seq, subject, data, unreadable)
                if record is not None:
                    yield record

    async def follow(
        self, run_id: str, after: int = 0, *, unreadable: list[Unreadable] | None = None
    ) -> AsyncGenerator[Recorded, None]:
        """Reads what is stored after ``after``, then sleeps on the append condition
        until more is; never holds the condition while the caller has an event."""
        cursor = after
        while True:
            stored = len(self._messages)
            for seq in range(cursor + 1, stored + 1):
                subject, data = self._messages[seq - 1]
                cursor = seq
                parsed = parse_subject(subject)
                if parsed is None or parsed[0] != run_id:
                    continue
                record = _decode_record(seq, subject, data, unreadable)
                if record is not None:
                    yield record
            async with self._new_message:
                while len(self._messages) <= cursor:
                    await self._new_message.wait()

    async def run_ids(self) -> list[str]:
        found: dict[str, None] = {}
        for subject, _ in self._messages:
            parsed = parse_subject(subject)
            if parsed and parsed[1] == "problem.submitted":
                found.setdefault(parsed[0])
        return list(found)

    async def last_seq(self) -> int:
        return len(self._messages)

    async def work_queue(self, consumer: str, tags: Sequence[str] | None = None) -> _MemoryWorkQueue:
        state = self._consumers.setdefault(consumer, _Consumer([]))
        wanted = [ALL_RUNS] if tags is None else [type_filter(tag) for tag in tags]
        state.patterns += [pattern for pattern in wanted if not filter_covers(state.patterns, pattern)]
        return _MemoryWorkQueue(self, state)

    def _next_delivery(self, state: _Consumer) -> Delivery | None:
        seq = self._next_seq(state)
        if seq is None:
            return None
        state.counts[seq] = state.counts.get(seq, 0) + 1
        subject, data = self._messages[seq - 1]
        event, error = _decode_or_error(data)

        async def ack() -> None:
            state.acked.add(seq)

        async def nak(delay: float | None = None) -> None:
            if self.max_deliver < 0 or state.counts[seq] < self.max_deliver:
                state.redeliver.append(seq)
            async with self._new_message:
                self._new_message.notify_all()

        async def term() -> None:
            state.acked.add(seq)

        async def progress() -> None:
            return None

        return Delivery(
            seq, subject, state.counts[seq], event, error, data, ack, nak, term, progress,
            expected_run_seq=self._conditions.get(seq),
        )

    def _next_seq(self, state: _Consumer) -> int | None:
        if state.redeliver:
            return state.redeliver.pop(0)
        while state.cursor < len(self._messages):
            state.cursor += 1
            subject = self._messages[state.cursor - 1][0]
            if any(subject_matches(pattern, subject) for pattern in state.patterns):
                return state.cursor
        return None

    async def mark_handled(self, key: str) -> None:
        self._handled.add(key)

    async def was_handled(self, key: str) -> bool:
        return key in self._handled

    async def put_checkpoint(self, name: str, data: bytes) -> None:
        self._checkpoints[name] = data

    async def get_checkpoint(self, name: str) -> bytes | None:
        return self._checkpoints.get(name)

    def bus_failure(self, exc: BaseException) -> bool | None:
        """No bus here: none of a handler's errors is this log's."""
        return None

    async def close(self) -> None:
        return None


class _MemoryWorkQueue:
    def __init__(self, log: InMemoryEventLog, state: _Consumer) -> None:
        self.log = log
        self.state = state

    async def pull(self, batch: int, timeout: float) -> list[Delivery]:
        out: list[Delivery] = []
        deadline = asyncio.get_running_loop().time() + timeout
        while len(out) < batch:
            delivery = self.log._next_delivery(self.state)  # same module family
            if delivery is not None:
                out.append(delivery)
                continue
            remaining = deadline - asyncio.get_running_loop().time()
            if out or remaining <= 0:
                break
            async with self.log._new_message:
                try:
                    await asyncio.wait_for(self.log._new_message.wait(), remaining)
                except TimeoutError:
                    break
        return out


class _Consumer:
    def __init__(self, patterns: list[str]) -> None:
        self.patterns = patterns
        self.cursor = 0
        self.redeliver: list[int] = []
        self.counts: dict[int, int] = {}
        self.acked: set[int] = set()


def _decode_or_error(data: bytes) -> tuple[Event | UnknownEvent | None, str | None]:
    try:
        return decode(data), None
    except DecodeError as exc:
        return None, str(exc)


def _decode_record(seq: int, subject: str, data: bytes, unreadable: list[Unreadable] | None) -> Recorded | None:
    found = record_of(seq, subject, data)
    if isinstance(found, Unreadable):
        report_unreadable(found, unreadable)
        return None
    return found
