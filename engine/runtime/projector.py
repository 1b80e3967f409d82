"""The live projection runner: folds every registered projection over each run's events.

Each (projection, run) pair is checkpointed as one KV value holding the state *and* the
last stream sequence folded into it (``replay.rebuild.Checkpoint``), so the two can never
drift apart. A separate cursor remembers how far the whole stream was read; it is only
written after the run checkpoints it covers, and events at or below a run checkpoint's
sequence are skipped, so a projector killed anywhere resumes to exactly the state a
clean rebuild gives.

Wiring into ``apollo up``::

    stop = asyncio.Event()
    task = asyncio.create_task(run_projector(runtime.log, stop))
    ...                       # on shutdown:
    stop.set(); await task
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import structlog

from engine.eventlog.port import EventLog
from engine.eventlog.stored import report_unreadable
from engine.eventlog.subject_match import filter_covers
from engine.runtime.rejections import record_rejection
from events.record import Recorded, Unreadable
from handlers.projections.registry import Projection, projections
from replay.errors import CheckpointUnusable
from replay.rebuild import checkpoint_key, decode_checkpoint, encode_checkpoint, gc_paused, load_state

log = structlog.get_logger("apollo.projector")

CURSOR_KEY = "projector.cursor"


class _Cursor(msgspec.Struct, frozen=True):
    last_seq: int


@dataclass
class _RunState:
    states: dict[str, Any]
    last_seqs: dict[str, int]
    dirty: bool = False


@dataclass
class Projector:
    """Folds the stream into per-run projection states and checkpoints them."""

    event_log: EventLog
    registry: Mapping[str, Projection] = field(default_factory=projections)
    flush_every: int = 512
    """Checkpoint after this many events (and whenever the projector catches up)."""
    poll: float = 0.25
    """Seconds to wait before looking for new events once caught up."""
    max_cached_runs: int = 4096
    position: int = 0
    """Last stream sequence read."""
    work_filter: Sequence[str] | None = None
    """The work consumer's filter subjects, when this projector records the unreadable
    messages outside it (no worker is delivered those): ``apollo up``'s projector does."""
    _runs: OrderedDict[str, _RunState] = field(default_factory=OrderedDict)

    async def catch_up(self) -> int:
        """Fold everything appended since the cursor, then checkpoint; returns events folded."""
        if self.position == 0:
            self.position = await self._read_cursor()
        folded = 0
        skipped: list[Unreadable] = []
        with gc_paused():  # a long backlog folds like a rebuild (see replay.rebuild.gc_paused)
            async for record in self.event_log.read_all(after_seq=self.position, unreadable=skipped):
                await self.apply(record)
                folded += 1
                if folded % self.flush_every == 0:
                    await self.flush()
                    gc.collect(0)
        for found in skipped:  # reported once; the cursor moves past them so no poll reads them again
            if self.work_filter is not None and not filter_covers(self.work_filter, found.subject):
                await record_rejection(self.event_log, seq=found.seq, subject=found.subject, reason=found.reason,
                                       excerpt=found.excerpt, lost=found.lost)
            else:
                report_unreadable(found, None)
            self.position = max(self.position, found.seq)
        await self.flush()
        return folded

    async def apply(self, record: Recorded) -> None:
        """Fold one recorded event into its run's states (idempotent per sequence)."""
        run = await self._run(record.event.run_id)
        for name, projection in self.registry.items():
            if record.seq > run.last_seqs.get(name, 0):
                run.states[name] = projection.evolve(run.states[name], record.event)
                run.last_seqs[name] = record.seq
                run.dirty = True
        self.position = max(self.position, record.seq)

    async def flush(self) -> None:
        """Write dirty run checkpoints, then the cursor (in that order)."""
        for run_id, run in list(self._runs.items()):
            if run.dirty:
                await self._write_run(run_id, run)
        await self.event_log.put_checkpoint(CURSOR_KEY, msgspec.json.encode(_Cursor(self.position)))
        while len(self._runs) > self.max_cached_runs:
            self._runs.popitem(last=False)

    async def state(self, run_id: str, projection: str) -> Any:
        """The live state of one projection of one run (from memory or its checkpoint)."""
        return (await self._run(run_id)).states[projection]

    async def run(self, stop: asyncio.Event) -> None:
        """Catch up, then follow the stream until ``stop`` is set."""
        while not stop.is_set():
            try:
                await self.catch_up()
            except Exception as exc:  # noqa: BLE001 - keep projecting through broker hiccups
                log.warning("projector_read_failed", error=repr(exc))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.poll)

    async def _run(self, run_id: str) -> _RunState:
        run = self._runs.get(run_id)
        if run is None:
            run = self._runs[run_id] = await self._load(run_id)
        self._runs.move_to_end(run_id)
        return run

    async def _load(self, run_id: str) -> _RunState:
        states: dict[str, Any] = {}
        last: dict[str, int] = {}
        for name, projection in self.registry.items():
            data = await self.event_log.get_checkpoint(checkpoint_key(name, run_id))
            states[name], last[name] = projection.initial(), 0
            if data is None:
                continue
            try:
                checkpoint = decode_checkpoint(data)
                states[name], last[name] = load_state(checkpoint, projection), checkpoint.last_seq
            except (msgspec.DecodeError, msgspec.ValidationError, CheckpointUnusable) as exc:
                # An unreadable checkpoint is rebuilt from the log rather than trusted.
                log.warning("checkpoint_unreadable", run_id=run_id, projection=name, error=str(exc))
                return await self._rebuild(run_id)
        return _RunState(states, last)

    async def _rebuild(self, run_id: str) -> _RunState:
        run = _RunState({n: p.initial() for n, p in self.registry.items()}, dict.fromkeys(self.registry, 0))
        for record in await self.event_log.read_run(run_id, upto_seq=self.position or None):
            for name, projection in self.registry.items():
                run.states[name] = projection.evolve(run.states[name], record.event)
                run.last_seqs[name] = record.seq
        run.dirty = True
        return run

    async def _write_run(self, run_id: str, run: _RunState) -> None:
        for name in self.registry:
            data = encode_checkpoint(run_id, name, run.states[name], run.last_seqs.get(name, 0))
            await self.event_log.put_checkpoint(checkpoint_key(name, run_id), data)
        run.dirty = False

    async def _read_cursor(self) -> int:
        data = await self.event_log.get_checkpoint(CURSOR_KEY)
        if data is None:
            return 0
        try:
            return msgspec.json.decode(data, type=_Cursor).last_seq
        except (msgspec.DecodeError, msgspec.ValidationError):
            return 0


async def run_projector(event_log: EventLog, stop_event: asyncio.Event, **options: Any) -> None:
    """Run the live projector until ``stop_event`` is set (what ``apollo up`` starts)."""
    await Projector(event_log, **options).run(stop_event)
