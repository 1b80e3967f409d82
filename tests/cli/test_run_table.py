"""The rows of `apollo runs`: what each column says, the filters, newest first, ids never cut."""

from __future__ import annotations

import argparse
import uuid
from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from engine.cli.run_filters import point_in_time, run_filter
from engine.errors import EngineError
from engine.testing.event_builders import started, submitted
from events.record import Recorded
from events.run import RunCompleted, RunFailed
from replay.run_table import RunFilter, render_table, run_row, select

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def _run(run_id: str, *, at: datetime, model: str = "qwen-7b", dataset: str | None = "gsm8k_reason",
         source: str = "gsm8k", workflow: str = "reason", ending: str | None = "completed",
         score: float = 1.0) -> list[Recorded]:
    """A run's records: submitted and started at ``at``, ended 90 s later (or still running)."""
    metadata = {"dataset": dataset} if dataset else {}
    events = [
        msgspec.structs.replace(submitted(run_id, data_source=source, workflow=workflow, metadata=metadata),
                                occurred_at=at),
        msgspec.structs.replace(started(run_id, workflow=workflow, settings={"models": {"policy": {"model": model}}}),
                                occurred_at=at),
    ]
    end = at + timedelta(seconds=90)
    common = {"event_id": str(uuid.uuid4()), "run_id": run_id, "occurred_at": end}
    if ending == "completed":
        events.append(RunCompleted(**common, done_reason="answer", answer="5", score=score))
    elif ending == "failed":
        events.append(RunFailed(**common, reason="model unreachable"))
    return [Recorded(seq, f"apollo.run.{run_id}.x", event) for seq, event in enumerate(events, 1)]


def _rows() -> list:
    return [
        run_row("old", _run("old", at=T0)),
        run_row("new", _run("new", at=T0 + timedelta(days=2), model="llama-8b", dataset="aime24_reason",
                            source="aime24", ending="failed")),
        run_row("mid", _run("mid", at=T0 + timedelta(days=1), ending=None, workflow="evolve",
                            dataset="gsm8k_evolve")),
    ]


def test_a_row_names_workflow_model_dataset_score_and_duration() -> None:
    """A finished dataset run's row carries the columns a researcher scans for."""
    row = run_row("old", _run("old", at=T0, score=0.0))
    assert (row.workflow, row.model, row.dataset, row.status, row.score) == ("reason", "qwen-7b", "gsm8k",
                                                                               "completed", 0.0)
    assert row.duration_s == 90.0 and row.started == T0.isoformat()


def test_a_run_still_going_has_no_duration() -> None:
    """A run without an ending is running and its duration is not guessed."""
    row = run_row("mid", _run("mid", at=T0, ending=None))
    assert row.status == "running" and row.duration_s is None


def test_runs_are_listed_newest_first_and_limited() -> None:
    """Sorting is by start time, newest first; --limit keeps the newest."""
    assert [row.run_id for row in select(_rows(), RunFilter())] == ["new", "mid", "old"]
    assert [row.run_id for row in select(_rows(), RunFilter(), limit=1)] == ["new"]


@pytest.mark.parametrize(("keep", "expected"), [
    (RunFilter(dataset="gsm8k"), ["mid", "old"]),
    (RunFilter(dataset="AIME24"), ["new"]),
    (RunFilter(model="llama"), ["new"]),
    (RunFilter(status="running"), ["mid"]),
    (RunFilter(workflow="evolve"), ["mid"]),
    (RunFilter(since=T0 + timedelta(hours=12)), ["new", "mid"]),
    (RunFilter(until=T0 + timedelta(hours=12)), ["old"]),
    (RunFilter(dataset="gsm8k", status="failed"), []),
])
def test_filters_keep_only_matching_runs(keep: RunFilter, expected: list[str]) -> None:
    """Each filter narrows the list; combined filters must all hold."""
    assert [row.run_id for row in select(_rows(), keep)] == expected


def test_long_ids_never_break_the_columns() -> None:
    """Every row's columns start at the same place however long the run ids are."""
    long_id = "gsm8k_reason-0123abcd-problem-with-a-long-name-s3-r2"
    rows = [*_rows(), run_row(long_id, _run("x", at=T0, model="a-model-with-an-extremely-long-name/that-goes-on"))]
    lines = render_table(select(rows, RunFilter())).splitlines()
    status_at = lines[0].index("STATUS")
    assert all(line[status_at:].split()[0] in {"STATUS", "completed", "failed", "running"} for line in lines)
    assert "gsm8k_reason-0123abcd-problem-with-a-long-name-s3-r2" in render_table(rows)


def test_ages_and_dates_become_utc_times() -> None:
    """--since takes an age or an ISO date/time; a zone-less time is local."""
    now = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
    assert point_in_time("2h", now=now) == now - timedelta(hours=2)
    assert point_in_time("7d", now=now) == now - timedelta(days=7)
    assert point_in_time("2026-11-25T10:30+00:00") == datetime(2026, 11, 25, 10, 30, tzinfo=UTC)
    assert point_in_time("2026-11-25").tzinfo is UTC


@pytest.mark.parametrize("text", ["yesterday", "2h30", "-2h", "", "2026-13-01", "99999999999999w"])
def test_garbage_times_are_refused_with_one_line(text: str) -> None:
    """Anything but a date, a date and time or an age is an argparse error naming the value."""
    with pytest.raises(argparse.ArgumentTypeError, match=r"expected a date|too far back"):
        point_in_time(text)


@pytest.mark.parametrize(("since", "until"), [("2h", "1d"), ("2026-11-25", "2026-11-25"), ("2026-11-26", "2026-11-25")])
def test_since_not_before_until_is_refused(since: str, until: str) -> None:
    """A time window that cannot hold a run (ages read backwards: --since 2h --until 1d) is one error, not 'no runs'."""
    args = argparse.Namespace(since=point_in_time(since), until=point_in_time(until))
    with pytest.raises(EngineError, match=r"--since .* is not before --until .*no run can match"):
        run_filter(args)


def test_since_before_until_makes_the_window() -> None:
    """A proper window reaches the filter unchanged."""
    args = argparse.Namespace(since=point_in_time("1d"), until=point_in_time("2h"))
    window = run_filter(args)
    assert (window.since, window.until) == (args.since, args.until)


def test_a_fork_recorded_with_its_parents_submission_time_starts_at_its_first_own_event() -> None:
    """Forks made before they carried their own time: their row starts when they first acted, not
    when the parent began (a 12 s fork is not listed as 12 minutes long)."""
    parent = _run("p-1", at=T0)
    forked_at = T0 + timedelta(minutes=12)
    root = msgspec.structs.replace(parent[0].event, run_id="f-1", event_id="f-1", parent_run_id="p-1", fork_seq=2,
                                   metadata={"fork": {"last_copied_id": "copied"}})
    copied = msgspec.structs.replace(parent[1].event, run_id="f-1", event_id="copied")
    ended = RunCompleted(event_id="end", run_id="f-1", occurred_at=forked_at + timedelta(seconds=12),
                         done_reason="answer", answer="5", score=1.0)
    own = msgspec.structs.replace(copied, event_id="own", occurred_at=forked_at)
    records = [Recorded(seq, "apollo.run.f-1.x", event) for seq, event in enumerate([root, copied, own, ended], 1)]
    row = run_row("f-1", records)
    assert row.started == forked_at.isoformat() and row.duration_s == 12.0
