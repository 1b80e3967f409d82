"""The run index's file: one SQLite row per run, ordered and filtered the way `apollo runs` asks.

Each row keeps the run's fold state (:class:`replay.run_summary.RunSummary`) and the row it
gives (:class:`replay.run_table.RunRow`, as the JSON `apollo runs --json` prints), plus the
columns a query sorts and filters on. A ``meta`` table holds the schema version, the stream
the index was folded from and the last stream sequence folded: rows and that sequence are
written in one transaction, so the file is always a prefix of the log.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path

import msgspec

from engine.errors import EngineError
from replay.run_summary import RunSummary
from replay.run_table import RunFilter, RunRow, row_of

SCHEMA_VERSION = 4
"""Raise on any change to the tables or to what a summary holds; an older file is rebuilt."""

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    listed INTEGER NOT NULL,
    ord TEXT NOT NULL,
    started_ts REAL,
    workflow TEXT NOT NULL,
    model TEXT NOT NULL,
    dataset TEXT NOT NULL,
    data_source TEXT NOT NULL,
    status TEXT NOT NULL,
    state BLOB NOT NULL,
    row TEXT NOT NULL
);
CREATE INDEX runs_newest ON runs (listed, ord, run_id);
"""
_COLUMNS = "run_id, listed, ord, started_ts, workflow, model, dataset, data_source, status, state, row"

_state_decoder = msgspec.json.Decoder(RunSummary)
_row_decoder = msgspec.json.Decoder(RunRow)
_encoder = msgspec.json.Encoder()


class IndexUnusable(EngineError):  # a condition, handled by rebuilding
    """The file is not an index this version can use (foreign, corrupt, another schema)."""


class IndexUnwritable(EngineError):
    """The index file cannot be made, opened or written here (a read-only data dir, a full disk)."""


class CorruptEntry(EngineError):  # handled by refolding the run
    """One run's stored entry cannot be read back."""

    def __init__(self, run_id: str, reason: str) -> None:
        super().__init__(f"run {run_id}: {reason}")
        self.run_id = run_id


class RunIndexStore:
    """An open index file."""

    def __init__(self, path: Path | None) -> None:
        """Open the file at ``path`` (made if missing); ``None`` keeps the index in memory.

        Raises:
            IndexUnusable: the file is not an SQLite database.
            IndexUnwritable: the file cannot be made, opened or written.
        """
        self.path = path
        try:
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(":memory:" if path is None else path, timeout=60.0, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise IndexUnwritable(str(exc)) from exc
        self.db.create_function("py_lower", 1, _lower, deterministic=True)
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.OperationalError as exc:
            self.db.close()
            raise IndexUnwritable(str(exc)) from exc
        except sqlite3.DatabaseError as exc:
            self.db.close()
            raise IndexUnusable(f"not an SQLite file: {exc}") from exc

    def close(self) -> None:
        self.db.close()

    # -- meta -------------------------------------------------------------------------

    def check(self, stream: str) -> int:
        """The last sequence folded, after checking the file is this schema's index of ``stream``;
        0 for an empty file (its tables are made).

        Raises:
            IndexUnusable: the file holds something else (the message says what).
        """
        try:
            tables = {name for (name,) in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if not tables:
                self.db.executescript(_SCHEMA)
                self._set_meta({"schema": str(SCHEMA_VERSION), "stream": stream, "last_seq": "0"})
                return 0
            if tables != {"meta", "runs"}:
                raise IndexUnusable(f"unexpected tables {sorted(tables)}")
            meta = dict(self.db.execute("SELECT key, value FROM meta"))
        except sqlite3.DatabaseError as exc:
            raise IndexUnusable(str(exc)) from exc
        if meta.get("schema") != str(SCHEMA_VERSION):
            raise IndexUnusable(f"schema {meta.get('schema')!r}, this version reads {SCHEMA_VERSION}")
        if meta.get("stream") != stream:
            raise IndexUnusable(f"folded from stream {meta.get('stream')!r}, not {stream!r}")
        try:
            return int(meta["last_seq"])
        except (KeyError, ValueError) as exc:
            raise IndexUnusable(f"no readable last sequence ({exc})") from exc

    def _set_meta(self, values: dict[str, str]) -> None:
        self.db.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", values.items())

    # -- writing ----------------------------------------------------------------------

    def load(self, run_id: str) -> RunSummary | None:
        """The run's fold state, ``None`` when the run is not indexed.

        Raises:
            CorruptEntry: the stored state cannot be decoded as this run's.
        """
        found = self.db.execute("SELECT state FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if found is None:
            return None
        return _decode_state(run_id, found[0])

    def save(self, summaries: Iterable[RunSummary], last_seq: int) -> None:
        """Store the summaries and the sequence they are folded up to, in one transaction."""
        rows = [_columns(summary) for summary in summaries]
        try:
            with _transaction(self.db):
                self.db.executemany(f"INSERT OR REPLACE INTO runs ({_COLUMNS}) VALUES ({', '.join('?' * 11)})",
                                    rows)
                self._set_meta({"last_seq": str(last_seq)})
        except sqlite3.OperationalError as exc:
            raise IndexUnwritable(f"cannot write the run index {self.path}: {exc}") from exc

    # -- reading ----------------------------------------------------------------------

    def rows(self, keep: RunFilter, *, before: tuple[str, str] | None = None) -> Iterator[tuple[str, str]]:
        """``(run_id, row JSON)`` of listed runs that may pass ``keep``, newest first (the order
        of :func:`replay.run_table.select`), strictly after ``before`` (an ``order_key``)."""
        where, params = ["listed = 1"], []
        if keep.status:
            where.append("status = ?")
            params.append(keep.status)
        if keep.workflow:
            where.append("workflow = ?")
            params.append(keep.workflow)
        if keep.dataset:
            where.append("(py_lower(dataset) = ? OR py_lower(data_source) = ?)")
            params += [keep.dataset.lower()] * 2
        if keep.model:
            where.append("instr(py_lower(model), ?) > 0")
            params.append(keep.model.lower())
        if keep.since:  # a second's slack: the exact comparison is the filter's own, on each row
            where.append("started_ts >= ?")
            params.append(keep.since.timestamp() - 1.0)
        if keep.until:
            where.append("started_ts < ?")
            params.append(keep.until.timestamp() + 1.0)
        if before is not None:
            where.append("(ord, run_id) < (?, ?)")
            params += list(before)
        query = f"SELECT run_id, row FROM runs WHERE {' AND '.join(where)} ORDER BY ord DESC, run_id DESC"
        yield from self.db.execute(query, params)

    def order_key(self, run_id: str) -> tuple[str, str] | None:
        found = self.db.execute("SELECT ord FROM runs WHERE run_id = ? AND listed = 1", (run_id,)).fetchone()
        return None if found is None else (found[0], run_id)

    def ids_from(self, prefix: str, limit: int) -> tuple[list[str], int]:
        """Up to ``limit`` listed run ids starting with ``prefix`` (sorted), and how many there are."""
        where = "listed = 1 AND substr(run_id, 1, ?) = ? AND run_id >= ?"
        params = (len(prefix), prefix, prefix)
        ids = [run_id for (run_id,) in self.db.execute(
            f"SELECT run_id FROM runs WHERE {where} ORDER BY run_id LIMIT ?", (*params, limit))]
        if len(ids) < limit:
            return ids, len(ids)
        (count,) = self.db.execute(f"SELECT count(*) FROM runs WHERE {where}", params).fetchone()
        return ids, count

    def row(self, run_id: str) -> str | None:
        found = self.db.execute("SELECT row FROM runs WHERE run_id = ? AND listed = 1", (run_id,)).fetchone()
        return None if found is None else str(found[0])

    def count(self) -> int:
        (count,) = self.db.execute("SELECT count(*) FROM runs WHERE listed = 1").fetchone()
        return int(count)

    def entries(self) -> Iterator[tuple[str, bytes, str]]:
        """Every stored ``(run_id, state, row JSON)``, listed or not (comparisons, checks)."""
        yield from self.db.execute("SELECT run_id, state, row FROM runs ORDER BY run_id")


def decode_row(run_id: str, text: str) -> RunRow:
    """A stored row back as a :class:`RunRow`.

    Raises:
        CorruptEntry: it is not one, or not this run's.
    """
    try:
        row = _row_decoder.decode(text)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise CorruptEntry(run_id, f"unreadable row: {exc}") from None
    if row.run_id != run_id:
        raise CorruptEntry(run_id, f"the row names run {row.run_id!r}")
    return row


def _decode_state(run_id: str, data: bytes) -> RunSummary:
    try:
        summary = _state_decoder.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, TypeError) as exc:
        raise CorruptEntry(run_id, f"unreadable state: {exc}") from None
    if summary.run_id != run_id:
        raise CorruptEntry(run_id, f"the state names run {summary.run_id!r}")
    return summary


def _columns(summary: RunSummary) -> tuple[object, ...]:
    row = row_of(summary)
    started = datetime.fromisoformat(row.started) if row.started else None
    return (summary.run_id, int(summary.listed), f"1{row.started}" if row.started else "0",
            started.timestamp() if started else None, row.workflow, row.model, row.dataset, row.data_source,
            row.status, _encoder.encode(summary), json.dumps(msgspec.to_builtins(row)))


def _lower(text: object) -> str:
    return str(text).lower()


class _transaction:  # used as a context manager
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *_: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")

