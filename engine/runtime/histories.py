"""A per-worker cache of each run's events, so deciders read history cheaply.

Reads a handler depends on are read-your-writes: the stream allows direct gets, so a
replica that is behind may answer, and its (correct but short) prefix must never be
decided on. A read has to reach the delivered event and the run's last event this
worker appended; a short one is read again, then from the stream leader.

The cache also decodes each run's recorded settings once, the first time a handler asks
after the run's ``run.started`` is in it, and keeps them as long as the run's events.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict

import structlog

from engine.errors import StaleHistory
from engine.eventlog.port import EventLog
from engine.eventlog.stored import report_unreadable
from events.base import Event
from events.record import Recorded, Unreadable
from events.run import RunStarted
from handlers.run_settings import RunSettings, RunSettingsError, run_settings_of

log = structlog.get_logger("apollo.histories")

CATCH_UP_DELAYS = (0.005, 0.02, 0.05)
"""Seconds before each direct re-read of a short history (a replica applies within ms)."""


class RunHistories:
    """Keeps each run's recorded prefix; fetches only what is new.

    Events are immutable and ordered by stream sequence, so a cached prefix never goes
    stale: reading ``(last_seq, upto_seq]`` brings it up to date.
    """

    def __init__(self, log: EventLog, *, max_runs: int = 2048) -> None:
        self._log = log
        self._runs: OrderedDict[str, list[Recorded]] = OrderedDict()
        self._max_runs = max_runs
        self._written: OrderedDict[str, int] = OrderedDict()
        """Per run, the last sequence this worker appended (the reads must reach it too)."""
        self.short_reads = 0
        """Reads that came back shorter than required (each was read again)."""
        self._settings: dict[str, tuple[int, RunSettings | RunSettingsError]] = {}
        """Per cached run, its ``run.started``'s sequence and decoded settings (or why they do not decode)."""

    async def upto(self, run_id: str, seq: int) -> list[Recorded]:
        """The run's events with stream sequence <= ``seq``."""
        records = await self._refresh(run_id, seq, upto=seq)
        if records and records[-1].seq > seq:
            return [record for record in records if record.seq <= seq]
        return list(records)

    async def latest(self, run_id: str, seq: int) -> list[Recorded]:
        """The run's events up to at least ``seq``, plus any later ones the read brings.

        ``seq`` must be an event of this run (the one being handled). The result also
        reaches the run's last event this worker appended, so later events let the
        dispatcher see outputs already recorded for an input.

        Raises:
            StaleHistory: neither the replicas nor the stream leader had the events yet.
        """
        return list(await self._refresh(run_id, max(seq, self._written.get(run_id, 0)), upto=None, exact=True))

    async def current(self, run_id: str, seq: int) -> list[Recorded]:
        """Everything the run has recorded so far (and at least up to ``seq``).

        :meth:`latest` reaches the delivered event and this worker's own writes, which is
        all a handler needs; a walk for what other workers recorded below an event (a
        redelivery) needs the rest too. The leader says where the run ends, one request,
        and the read goes that far (replicas first, then the leader).
        """
        return await self.latest(run_id, max(seq, await self._log.last_run_seq(run_id)))

    async def _refresh(self, run_id: str, seq: int, *, upto: int | None, exact: bool = False) -> list[Recorded]:
        records = self._runs.get(run_id)
        if records is None:
            records = []
            self._runs[run_id] = records
        self._runs.move_to_end(run_id)
        reached = await self._read_into(records, run_id, seq, upto)
        if exact and reached < seq:
            await self._catch_up(records, run_id, seq)
        self._trim()
        return records

    async def _read_into(self, records: list[Recorded], run_id: str, seq: int, upto: int | None) -> int:
        """Read what is new into ``records``; returns the last sequence the read reached.

        A record that can never be read (reported, skipped) still shows how far the read got.
        """
        last = records[-1].seq if records else 0
        if last >= seq:
            return last
        skipped: list[Unreadable] = []
        fresh = await self._log.read_run(run_id, after_seq=last, upto_seq=upto, unreadable=skipped)
        _extend(records, fresh)
        return _reached(last, fresh, skipped)

    async def _catch_up(self, records: list[Recorded], run_id: str, seq: int) -> None:
        """Read again until the history reaches ``seq``: replicas first, then the leader.

        What a short read brought is kept: a replica's state is a prefix of the stream,
        so the cache stays an exact prefix of the run, only not yet a long enough one.
        """
        self.short_reads += 1
        for delay in CATCH_UP_DELAYS:
            await asyncio.sleep(delay)
            if await self._read_into(records, run_id, seq, None) >= seq:
                log.debug("history_caught_up", run_id=run_id, seq=seq)
                return
        last = records[-1].seq if records else 0
        skipped: list[Unreadable] = []
        fresh = await self._log.read_run_from_leader(run_id, after_seq=last, unreadable=skipped)
        _extend(records, fresh)
        reached = _reached(last, fresh, skipped)
        if reached >= seq:
            log.info("history_read_from_leader", run_id=run_id, seq=seq)
            return
        msg = f"history of run {run_id} reaches sequence {reached}, not {seq}, even on the stream leader"
        raise StaleHistory(msg)

    def _trim(self) -> None:
        """Evict the least recently used runs beyond ``max_runs``.

        A run whose written mark is evicted is still read up to each delivered event.
        """
        while len(self._runs) > self._max_runs:
            run_id, _ = self._runs.popitem(last=False)
            self._settings.pop(run_id, None)
        while len(self._written) > self._max_runs:
            self._written.popitem(last=False)

    def wrote(self, run_id: str, seq: int) -> None:
        """Note that this worker appended an event of the run at ``seq``."""
        if seq > self._written.get(run_id, 0):
            self._written[run_id] = seq
            self._written.move_to_end(run_id)
            self._trim()

    def cached(self, run_id: str) -> list[Recorded]:
        """The cached prefix of the run as it stands (no read)."""
        return list(self._runs.get(run_id, ()))

    def settings(self, run_id: str, seq: int) -> RunSettings | None:
        """The run's recorded settings, typed, as an event at stream sequence ``seq`` reads
        them: decoded the first time they are asked for once the run's ``run.started`` is
        cached, and kept while the run is.

        ``None`` when ``run.started`` is not cached at or before ``seq``, or its settings do
        not decode: the handler's context then reads its history itself (the defaults
        before ``run.started``; the error, naming the run and the key, raised to the one
        call that reads them).
        """
        found = self._settings.get(run_id)
        if found is None:
            started = next(((r.seq, r.event.settings) for r in self._runs.get(run_id) or ()
                            if isinstance(r.event, RunStarted)), None)
            if started is None:
                return None
            started_at, recorded = started
            try:
                found = (started_at, run_settings_of(recorded))
            except RunSettingsError as exc:
                found = (started_at, exc)
            self._settings[run_id] = found
        started_seq, settings = found
        return settings if started_seq <= seq and isinstance(settings, RunSettings) else None

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
        self._settings.pop(run_id, None)
        self._written.pop(run_id, None)

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


def _reached(last: int, fresh: list[Recorded], skipped: list[Unreadable]) -> int:
    """How far a read got: its last record, readable or not (those are logged here)."""
    for found in skipped:
        report_unreadable(found, None)
    return max([last, *(record.seq for record in fresh), *(found.seq for found in skipped)])


def _extend(records: list[Recorded], fresh: list[Recorded]) -> None:
    """Append what is new; another task may have extended the cache during the read."""
    current = records[-1].seq if records else 0
    records.extend(record for record in fresh if record.seq > current)


def events_of(records: list[Recorded]) -> list[Event]:
    return [record.event for record in records]
