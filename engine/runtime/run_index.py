"""The index of runs: a projection of the log with one summary row per run.

Readers that select runs (`apollo runs`, `show`'s prefixes, `report`, `export`, `regrade`)
ask the index, then read only the histories they need. The index lives in a local SQLite
file (:mod:`engine.runtime.run_index_store`) and is caught up before every read: only the
events after the last sequence it folded are read, so a read costs what was appended since
plus what it asks for, not everything ever recorded. Rows and the folded sequence are
committed together in chunks, so a catch-up killed anywhere leaves a prefix the next one
continues from; a file that is not a usable index (corrupt, foreign, an older schema, or
ahead of a log that was replaced) is reported and rebuilt from the log, and a single
unreadable entry is refolded from its run's history.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from engine.eventlog.port import EventLog
from engine.runtime.run_index_store import CorruptEntry, IndexUnusable, IndexUnwritable, RunIndexStore, decode_row
from events.record import Unreadable
from events.subjects import parse_subject
from replay.rebuild import gc_paused
from replay.run_summary import RunSummary, fold, fold_unreadable
from replay.run_table import RunFilter, RunRow

log = structlog.get_logger("apollo.run_index")

CHUNK = 20_000
"""Events folded between commits of a catch-up."""
LONG_CATCH_UP = 100_000
"""A catch-up of this many events or more is announced (it takes seconds)."""


async def stream_identity(event_log: EventLog) -> str:
    """What tells this log from another one: a stream's name and creation time (a memory log's object)."""
    identity = getattr(event_log, "stream_identity", None)
    if identity is None:
        return f"memory-{id(event_log)}"
    return str(await identity())


def index_path(data_dir: Path, identity: str) -> Path:
    """The index file of the log ``identity`` names, in the data dir (one per log)."""
    digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
    return data_dir / "index" / f"runs-{digest}.sqlite"


@dataclass
class RunIndex:
    """An index file caught up with a log."""

    store: RunIndexStore
    event_log: EventLog
    identity: str
    position: int = 0
    notices: list[str] = field(default_factory=list)
    """What was found wrong and repaired, one line each (the CLI prints them)."""
    announce: Callable[[str], None] | None = None
    """Told, before a long catch-up, what it is about to do (the CLI says it on stderr)."""

    @classmethod
    async def open(cls, event_log: EventLog, path: Path, *, wait: bool = True, identity: str | None = None,
                   announce: Callable[[str], None] | None = None) -> RunIndex:
        """Open (or make) the index at ``path`` and catch it up with ``event_log`` (with ``wait``
        false, only when no other process is catching it up: see :meth:`catch_up`)."""
        identity = identity or await stream_identity(event_log)
        notices: list[str] = []
        index = cls(_usable_store(path, notices), event_log, identity, notices=notices, announce=announce)
        await index.catch_up(wait=wait)
        return index

    @classmethod
    async def in_data_dir(cls, event_log: EventLog, data_dir: Path, *, wait: bool = True,
                          announce: Callable[[str], None] | None = None) -> RunIndex:
        """The index of ``event_log`` kept in ``data_dir`` (one file per log), caught up."""
        identity = await stream_identity(event_log)
        return await cls.open(event_log, index_path(data_dir, identity), wait=wait, identity=identity,
                              announce=announce)

    def close(self) -> None:
        self.store.close()

    async def catch_up(self, *, chunk: int = CHUNK, after_commit: Callable[[int], None] | None = None,
                       wait: bool = True, max_backlog: int | None = None) -> int:
        """Fold every event appended since the last catch-up; returns how many were read.

        One process catches up at a time (a lock beside the file): a reader waits for the
        other's catch-up, which leaves it little to do; without ``wait`` (the engine's
        follower, which must not block its event loop) a busy index is left for next time.
        With ``max_backlog``, a catch-up that would fold more events than that folds none.
        ``after_commit`` is told each committed sequence (tests interrupt it there).
        """
        try:
            return await self._catch_up(chunk, after_commit, wait=wait, max_backlog=max_backlog)
        except IndexUnwritable as exc:
            if self.store.path is None:
                raise
            self.notices.append(f"cannot keep the run index at {self.store.path} ({exc}): "
                                "folding the whole log in memory instead")
            self.store.close()
            self.store, self.position = RunIndexStore(None), 0
            return await self._catch_up(chunk, after_commit, wait=wait, max_backlog=max_backlog)

    async def _catch_up(self, chunk: int, after_commit: Callable[[int], None] | None, *, wait: bool,
                        max_backlog: int | None) -> int:
        lock = index_lock(self.store.path, wait=wait) if self.store.path else contextlib.nullcontext(True)
        with lock as held:
            if not held:
                return 0
            self.position = self._checked_position()
            target = await self.event_log.last_seq()
            if self.position > target:  # the log was replaced by a shorter one
                self._rebuild(f"it has folded up to sequence {self.position} of a log that ends at {target}")
            if self.position >= target or (max_backlog is not None and target - self.position > max_backlog):
                return 0
            if self.announce is not None and target - self.position >= LONG_CATCH_UP:
                self.announce(f"bringing the run index up to date: {target - self.position:,} events to fold "
                              "(once: later reads fold only what is new)")
            return await self._fold_until(target, chunk, after_commit)

    def _checked_position(self) -> int:
        try:
            return self.store.check(self.identity)
        except IndexUnusable as exc:
            self._rebuild(str(exc))
            return 0

    def _rebuild(self, why: str) -> None:
        self.notices.append(f"run index {self.store.path}: {why}; rebuilt from the log")
        path = self.store.path
        self.store.close()
        if path is not None:
            for stale in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
                stale.unlink(missing_ok=True)
        self.store = RunIndexStore(path)
        self.store.check(self.identity)
        self.position = 0

    async def _fold_until(self, target: int, chunk: int, after_commit: Callable[[int], None] | None) -> int:
        pending: dict[str, RunSummary] = {}
        skipped: list[Unreadable] = []
        read = since_commit = 0
        with gc_paused():
            async for record in self.event_log.read_all(after_seq=self.position, unreadable=skipped):
                if record.seq > target:
                    break
                await self._fold_skipped(skipped, pending, target)
                fold(await self._summary(record.event.run_id, pending), record.seq, record.event)
                read += 1
                since_commit += 1
                if since_commit >= chunk:
                    self._commit(pending, record.seq, after_commit)
                    since_commit = 0
            await self._fold_skipped(skipped, pending, target)
        self._commit(pending, target, after_commit)
        return read

    async def _fold_skipped(self, skipped: list[Unreadable], pending: dict[str, RunSummary], target: int) -> None:
        for found in skipped:
            parsed = parse_subject(found.subject)
            if parsed is None or found.seq > target:
                continue
            fold_unreadable(await self._summary(parsed[0], pending), found.seq, parsed[1])
        skipped.clear()

    async def _summary(self, run_id: str, pending: dict[str, RunSummary]) -> RunSummary:
        """The run's summary being folded: from ``pending``, else the file, else a new one."""
        summary = pending.get(run_id)
        if summary is None:
            try:
                summary = self.store.load(run_id)
            except CorruptEntry as exc:
                summary = await self._refold(run_id, str(exc))
            summary = pending[run_id] = summary or RunSummary(run_id=run_id)
        return summary

    def _commit(self, pending: dict[str, RunSummary], upto: int, after_commit: Callable[[int], None] | None) -> None:
        self.store.save(pending.values(), upto)
        pending.clear()
        self.position = upto
        if after_commit is not None:
            after_commit(upto)

    async def _refold(self, run_id: str, why: str) -> RunSummary:
        """The run's summary folded again from its history up to the folded sequence."""
        self.notices.append(f"run index {self.store.path}: {why}; refolded from the log")
        summary = RunSummary(run_id=run_id)
        skipped: list[Unreadable] = []
        upto = self.position or None
        for record in await self.event_log.read_run(run_id, upto_seq=upto, unreadable=skipped):
            fold(summary, record.seq, record.event)
        for found in skipped:
            if upto is None or found.seq <= upto:
                fold_unreadable(summary, found.seq, (parse_subject(found.subject) or ("", ""))[1])
        return summary

    # -- reading ----------------------------------------------------------------------

    async def rows(self, keep: RunFilter | None = None, *, limit: int | None = None,
                   before: str | None = None) -> list[RunRow]:
        """Listed runs that pass ``keep``, newest first, at most ``limit``, older than run ``before``."""
        return [row for _, row in await self.row_texts(keep, limit=limit, before=before)]

    async def row_texts(self, keep: RunFilter | None = None, *, limit: int | None = None,
                        before: str | None = None) -> list[tuple[str, RunRow]]:
        """Like :meth:`rows`, each with its row's JSON text (what ``--json`` prints)."""
        keep = keep or RunFilter()
        after = None
        if before is not None:
            after = self.store.order_key(before)
            if after is None:
                return []
        out: list[tuple[str, RunRow]] = []
        repaired = False
        for run_id, text in list(self._iter(keep, after)) if limit is None else self._iter(keep, after):
            try:
                row = decode_row(run_id, text)
            except CorruptEntry as exc:
                await self._repair(run_id, str(exc))
                repaired = True
                break
            if keep.keeps(row):
                out.append((text, row))
                if limit is not None and len(out) >= limit:
                    break
        if repaired:  # read again from a repaired file
            return await self.row_texts(keep, limit=limit, before=before)
        return out

    def _iter(self, keep: RunFilter, after: tuple[str, str] | None) -> Iterator[tuple[str, str]]:
        return self.store.rows(keep, before=after)

    async def _repair(self, run_id: str, why: str) -> None:
        summary = await self._refold(run_id, why)
        self.store.save([summary], self.position)

    def pick(self, text: str, shown: int) -> tuple[list[str], int]:
        """Listed run ids that ``text`` names: itself when it is one, else those starting with it
        (at most ``shown`` of them, sorted) and how many there are."""
        if self.store.order_key(text) is not None:
            return [text], 1
        return self.store.ids_from(text, shown)

    def count(self) -> int:
        return self.store.count()

    async def row(self, run_id: str) -> RunRow | None:
        """The row of one listed run (``None`` when it is not one)."""
        found = self.store.row(run_id)
        if found is None:
            return None
        try:
            return decode_row(run_id, found)
        except CorruptEntry as exc:
            await self._repair(run_id, str(exc))
            return await self.row(run_id)


def _usable_store(path: Path, notices: list[str]) -> RunIndexStore:
    """The store at ``path``; a new one if it holds something else; one in memory if the file
    cannot be kept there (then every read folds the whole log, and says so)."""
    try:
        try:
            return RunIndexStore(path)
        except IndexUnusable as exc:
            notices.append(f"run index {path}: {exc}; rebuilt from the log")
            path.unlink(missing_ok=True)
            return RunIndexStore(path)
    except (IndexUnwritable, OSError) as exc:
        notices.append(f"cannot keep the run index at {path} ({exc}): folding the whole log in memory instead")
        return RunIndexStore(None)


async def follow_run_index(event_log: EventLog, data_dir: Path, stop: asyncio.Event, *, poll: float = 1.0) -> None:
    """Keep the data dir's index caught up while the engine records (what `apollo up` runs beside
    the projector), so readers find little to fold; until ``stop`` is set. A backlog of more
    than ``LONG_CATCH_UP`` events (an index never built over a long log) is left to the first
    reader: folding it here would take the dispatcher's event loop for seconds."""
    index: RunIndex | None = None
    try:
        while not stop.is_set():
            try:
                if index is None:
                    identity = await stream_identity(event_log)
                    notices: list[str] = []
                    store = _usable_store(index_path(data_dir, identity), notices)
                    index = RunIndex(store, event_log, identity, notices=notices)
                await index.catch_up(wait=False, max_backlog=LONG_CATCH_UP)
                for notice in index.notices:
                    log.warning("run_index_repaired", notice=notice)
                index.notices.clear()
            except Exception as exc:  # noqa: BLE001 - readers catch up themselves; keep following
                log.warning("run_index_follow_failed", error=repr(exc))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), poll)
    finally:
        if index is not None:
            index.close()


class index_lock:  # a context manager, named as one
    """An exclusive lock on ``<index>.lock``: one catch-up at a time per index file."""

    def __init__(self, path: Path, *, wait: bool) -> None:
        self.path = path.with_name(path.name + ".lock")
        self.wait = wait
        self.handle: Any = None

    def __enter__(self) -> bool:
        try:
            self.handle = self.path.open("a")
        except OSError as exc:
            raise IndexUnwritable(f"cannot make its lock {self.path}: {exc}") from exc
        try:
            fcntl.flock(self.handle, fcntl.LOCK_EX if self.wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.handle.close()
            self.handle = None
            return False
        return True

    def __exit__(self, *_: object) -> None:
        if self.handle is not None:
            fcntl.flock(self.handle, fcntl.LOCK_UN)
            self.handle.close()
