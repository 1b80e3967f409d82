"""A per-worker cache of each run's events, so deciders read history cheaply."""

from __future__ import annotations

from collections import OrderedDict

from engine.eventlog.port import EventLog
from events.base import Event
from events.record import Recorded


class RunHistories:
    """Keeps each run's recorded prefix; fetches only what is new.

    Events are immutable and ordered by stream sequence, so a cached prefix never goes
    stale: reading ``(last_seq, upto_seq]`` brings it up to date.
    """

    def __init__(self, log: EventLog, *, max_runs: int = 2048) -> None:
        self._log = log
        self._runs: OrderedDict[str, list[Recorded]] = OrderedDict()
        self._max_runs = max_runs

    async def upto(self, run_id: str, seq: int) -> list[Recorded]:
        """The run's events with stream sequence <= ``seq``."""
        records = await self._refresh(run_id, seq, upto=seq)
        if records and records[-1].seq > seq:
            return [record for record in records if record.seq <= seq]
        return list(records)

    async def latest(self, run_id: str, seq: int) -> list[Recorded]:
        """The run's events up to at least ``seq``, plus any later ones the read brings.

        Later events let the dispatcher see outputs already recorded for an input.
        """
        return list(await self._refresh(run_id, seq, upto=None))

    async def _refresh(self, run_id: str, seq: int, *, upto: int | None) -> list[Recorded]:
        records = self._runs.get(run_id)
        if records is None:
            records = []
            self._runs[run_id] = records
        self._runs.move_to_end(run_id)
        last = records[-1].seq if records else 0
        if last < seq:
            fresh = await self._log.read_run(run_id, after_seq=last, upto_seq=upto)
            # Another task may have extended the cache meanwhile: recompute after the await.
            current = records[-1].seq if records else 0
            records.extend(record for record in fresh if record.seq > current)
        self._trim()
        return records

    def _trim(self) -> None:
        """Evict the least recently used runs beyond ``max_runs``."""
        while len(self._runs) > self._max_runs:
            self._runs.popitem(last=False)

    def cached(self, run_id: str) -> list[Recorded]:
        """The cached prefix of the run as it stands (no read)."""
        return list(self._runs.get(run_id, ()))

    def last_seq(self, run_id: str) -> int:
        """Last sequence of the cached prefix (0 when nothing is cached)."""
        records = self._runs.get(run_id)
        return records[-1].seq if records else 0

    def begin(self, run_id: str, record: Recorded) -> None:
        """Start a run's cache with its first event, known to be first (no read needed)."""
        if not self._runs.get(run_id):
            self._runs[run_id] = [record]
            self._runs.move_to_end(run_id)
            self._trim()

    def forget(self, run_id: str) -> None:
        """Drop a run that has ended; an event of it arriving later is simply read again."""
        self._runs.pop(run_id, None)

    def extend(self, run_id: str, record: Recorded, *, after_seq: int) -> bool:
        """Add an event this worker appended when the run's last event was ``after_seq``.

        Only a cached prefix ending exactly there grows: a run forgotten or evicted while
        the append was under way stays out rather than restart from a partial history.
        Returns whether the record was added.
        """
        records = self._runs.get(run_id)
        if not records or records[-1].seq != after_seq:
            return False
        records.append(record)
        return True


def events_of(records: list[Recorded]) -> list[Event]:
    return [record.event for record in records]
