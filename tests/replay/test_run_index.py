"""The index of runs: caught up from the log, equal to a full rebuild however it got there."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from engine.eventlog.memory import InMemoryEventLog
from engine.runtime.run_index import RunIndex, follow_run_index, index_lock, index_path, stream_identity
from engine.runtime.run_index_store import RunIndexStore
from engine.testing.recorded_runs import EPOCH, RunSpec, recorded_run, spec_for
from events.record import Unreadable
from replay.run_table import RunFilter, run_row, select


class Interrupted(Exception):
    pass


async def _log_with(count: int, *, turns: int = 2) -> InMemoryEventLog:
    log = InMemoryEventLog()
    for number in range(count):
        await log.append_many(recorded_run(spec_for(number, turns=turns)))
    return log


def _entries(index: RunIndex) -> list[tuple[str, str]]:
    return [(run_id, row) for run_id, _, row in index.store.entries()]


async def _full_read_rows(log: InMemoryEventLog) -> list[dict]:
    """The rows as `apollo runs` made them before the index: every run's whole history read."""
    rows = []
    for run_id in await log.run_ids():
        skipped: list[Unreadable] = []
        rows.append(run_row(run_id, await log.read_run(run_id, unreadable=skipped), len(skipped)))
    return [row for row in select(rows, RunFilter())]


async def test_index_rows_equal_rows_read_from_whole_histories(tmp_path: Path) -> None:
    """Every row the index gives is the row a read of the run's whole history gives, in the same order."""
    log = await _log_with(24)
    await log.append_raw("apollo.run.run-00000003.model.responded", b"not json")
    index = await RunIndex.open(log, tmp_path / "runs.sqlite")
    rows = await index.rows()
    assert rows == await _full_read_rows(log)
    assert [row.unreadable for row in rows if row.run_id == "run-00000003"] == [1]


async def test_catch_up_folds_only_what_was_appended_since(tmp_path: Path) -> None:
    """A second catch-up reads only the new events, and a run spread over both catch-ups comes out whole."""
    log = await _log_with(5)
    events = recorded_run(RunSpec(run_id="late", at=EPOCH + timedelta(days=1), turns=3))
    await log.append_many(events[:4])
    index = await RunIndex.open(log, tmp_path / "runs.sqlite")
    await log.append_many(events[4:])
    assert await index.catch_up() == len(events) - 4
    assert await index.catch_up() == 0
    assert await index.rows() == await _full_read_rows(log)
    assert (await index.rows(limit=1))[0].status == "completed"


async def test_a_catch_up_killed_mid_way_resumes_to_a_full_rebuild(tmp_path: Path) -> None:
    """Interrupted after each commit in turn, the index caught up again equals one built in a single pass."""
    log = await _log_with(12, turns=3)
    clean = await RunIndex.open(log, tmp_path / "clean.sqlite")
    for stop_at in (1, 2, 5):
        index = RunIndex(RunIndexStore(tmp_path / f"killed-{stop_at}.sqlite"), log, clean.identity)
        commits: list[int] = []

        def stop(seq: int, commits: list[int] = commits, stop_at: int = stop_at) -> None:
            commits.append(seq)
            if len(commits) == stop_at:
                raise Interrupted

        with pytest.raises(Interrupted):
            await index.catch_up(chunk=17, after_commit=stop)
        await index.catch_up(chunk=17)
        assert _entries(index) == _entries(clean)


async def test_garbage_entry_is_reported_and_refolded(tmp_path: Path) -> None:
    """A row or state that is not the run's own is named in a notice and refolded from the run's history."""
    log = await _log_with(6)
    index = await RunIndex.open(log, tmp_path / "runs.sqlite")
    expected = _entries(index)
    index.store.db.execute("UPDATE runs SET row = '{\"run_id\": \"other\"}' WHERE run_id = 'run-00000002'")
    index.store.db.execute("UPDATE runs SET state = x'00ff' WHERE run_id = 'run-00000004'")
    rows = await index.rows()
    assert [row.run_id for row in rows] == [run_id for run_id, _ in sorted(expected, reverse=True)]
    await log.append_raw("apollo.run.run-00000004.x.y", b"garbage")  # the catch-up folds into the bad state
    await index.catch_up()
    assert any("run-00000002" in notice for notice in index.notices)
    assert any("run-00000004" in notice for notice in index.notices)
    rebuilt = await RunIndex.open(log, tmp_path / "again.sqlite")
    assert _entries(index) == _entries(rebuilt)


@pytest.mark.parametrize("damage", ["schema", "foreign", "not sqlite", "ahead"])
async def test_unusable_index_file_is_reported_and_rebuilt(tmp_path: Path, damage: str) -> None:
    """An older schema, another log's index, a file that is not SQLite, or one ahead of the log is rebuilt."""
    log = await _log_with(4)
    path = tmp_path / "runs.sqlite"
    index = await RunIndex.open(log, path)
    expected = _entries(index)
    if damage == "schema":
        index.store.db.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")
    elif damage == "foreign":
        index.store.db.execute("UPDATE meta SET value = 'OTHER@then' WHERE key = 'stream'")
    elif damage == "ahead":
        index.store.db.execute("UPDATE meta SET value = '999999' WHERE key = 'last_seq'")
    index.close()
    if damage == "not sqlite":
        path.write_bytes(b"this is not a database at all" * 100)
        for extra in ("-wal", "-shm"):
            path.with_name(path.name + extra).unlink(missing_ok=True)
    again = await RunIndex.open(log, path)
    assert again.notices, "the repair is reported"
    assert _entries(again) == expected


async def test_an_index_of_older_schema_with_other_tables_is_rebuilt(tmp_path: Path) -> None:
    """A file whose tables are not this version's is replaced by a fresh index."""
    path = tmp_path / "runs.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE runs_v1 (run_id TEXT)")
    index = await RunIndex.open(await _log_with(3), path)
    assert index.notices
    assert index.count() == 3


async def test_filters_limit_and_paging_match_the_full_selection(tmp_path: Path) -> None:
    """Filters, --limit and paging with --before give the rows the old full selection gave."""
    log = await _log_with(30)
    index = await RunIndex.open(log, tmp_path / "runs.sqlite")
    everything = await _full_read_rows(log)
    for keep in (RunFilter(status="failed"), RunFilter(model="LLAMA"), RunFilter(dataset="Math500"),
                 RunFilter(workflow="reason", since=EPOCH + timedelta(seconds=10),
                           until=EPOCH + timedelta(seconds=20))):
        assert await index.rows(keep) == select(everything, keep)
    pages, before = [], None
    while page := await index.rows(limit=7, before=before):
        pages += page
        before = page[-1].run_id
    assert pages == everything
    assert await index.rows(RunFilter(model="no such model")) == []


async def test_prefix_lookup(tmp_path: Path) -> None:
    """A whole id is itself; a prefix gives its matches, at most the number asked, with the count."""
    index = await RunIndex.open(await _log_with(12), tmp_path / "runs.sqlite")
    assert index.pick("run-00000003", 5) == (["run-00000003"], 1)
    assert index.pick("run-0000001", 5) == (["run-00000010", "run-00000011"], 2)
    assert index.pick("run-0000000", 3) == (["run-00000000", "run-00000001", "run-00000002"], 10)
    assert index.pick("nope", 5) == ([], 0)


async def test_the_engine_follower_keeps_the_index_caught_up(tmp_path: Path) -> None:
    """follow_run_index folds what is recorded while it runs, and stops when told."""
    log = await _log_with(3)
    stop = asyncio.Event()
    follower = asyncio.create_task(follow_run_index(log, tmp_path, stop, poll=0.01))
    await log.append_many(recorded_run(spec_for(3)))
    identity = await stream_identity(log)
    index = RunIndex(RunIndexStore(index_path(tmp_path, identity)), log, identity)
    for _ in range(500):
        if index.store.check(identity) == await log.last_seq():
            break
        await asyncio.sleep(0.01)
    stop.set()
    await asyncio.wait_for(follower, 5)
    assert index.count() == 4
    assert await index.catch_up() == 0


async def test_a_busy_index_is_left_to_its_holder_without_waiting(tmp_path: Path) -> None:
    """Without wait, a catch-up finding another holding the lock returns at once, folding nothing."""
    log = await _log_with(2)
    index = RunIndex(RunIndexStore(tmp_path / "runs.sqlite"), log, await stream_identity(log))
    with index_lock(index.store.path, wait=True):
        assert await index.catch_up(wait=False) == 0
    assert await index.catch_up(wait=False) > 0


async def test_a_data_dir_that_cannot_hold_the_index_reads_the_whole_log_instead(tmp_path: Path) -> None:
    """Where the index file cannot be made, the rows still come, folded in memory, and the reason is said."""
    log = await _log_with(5)
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    index = await RunIndex.in_data_dir(log, blocked)
    assert index.store.path is None
    assert any("in memory instead" in notice for notice in index.notices)
    assert await index.rows() == await _full_read_rows(log)


async def test_a_backlog_above_the_bound_is_left_for_a_reader(tmp_path: Path) -> None:
    """With max_backlog below what is pending, a catch-up folds nothing; without it, everything."""
    log = await _log_with(3)
    index = RunIndex(RunIndexStore(tmp_path / "runs.sqlite"), log, await stream_identity(log))
    assert await index.catch_up(max_backlog=5) == 0
    assert index.count() == 0
    assert await index.catch_up() > 5
    assert index.count() == 3
