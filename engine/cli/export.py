"""``apollo export``: training samples from sealed trajectories, as Parquet or JSON lines."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from engine.app.bootstrap import open_runtime
from engine.cli.export_skips import skip_lines
from engine.cli.run_filters import add_run_filter_arguments, run_filter
from engine.cli.run_lookup import open_run_index, pick_indexed, pick_run_id
from engine.cli.run_reads import read_runs
from engine.errors import EngineError
from engine.runtime.run_index import RunIndex
from events import DecodeError, Event, TrajectorySealed, decode
from events.base import tag_of
from events.episode import AnswerGraded, AnswerRegraded
from events.record import Recorded
from events.run import ProblemSubmitted, RunStarted
from events.subjects import RUN_PREFIX, SEALED_TRAJECTORIES
from replay.audit.regraded_rewards import regraded_rewards
from replay.run_table import RunRow, run_row
from replay.training.export import FORMATS, ExportReport, export_trajectories
from replay.training.samples import EXPORT_REWARD_SOURCES, INVALID_TURN_PENALTY, LAYOUTS, REGRADED, SampleOptions


def register(subparsers: Any) -> None:
    """Add the ``export`` command; its handler is ``args.handler(args) -> int``."""
    p = subparsers.add_parser(
        "export",
        help="training samples from sealed trajectories (parquet or jsonl)",
        description="Write one row per training sample of every sealed trajectory.",
    )
    p.add_argument("--format", choices=FORMATS, default="parquet", dest="fmt")
    p.add_argument("--layout", choices=LAYOUTS, default="per_turn")
    p.add_argument("--out", type=Path, required=True, help="file to write")
    p.add_argument(
        "--events",
        type=Path,
        help="read events from this JSON-lines file (one encoded event per line) "
        "instead of the event log",
    )
    p.add_argument("--invalid-turn-penalty", type=float, default=INVALID_TURN_PENALTY)
    p.add_argument("--sft-min-score", type=float, default=1.0)
    p.add_argument("--reward-source", choices=EXPORT_REWARD_SOURCES, default="ground_truth",
                   help="outcome reward of each sample: the grade against the ground truth, the "
                   "verifiers' label-free vote (evolve runs), or the latest regrade (`apollo regrade`; "
                   "trajectories never regraded are skipped and named)")
    p.add_argument("--run", action="append", dest="runs", metavar="RUN",
                   help="only this run (or an unambiguous prefix of its id); repeat for several")
    add_run_filter_arguments(p)
    p.set_defaults(handler=run_export)


def trajectories_of(events: Iterable[Any]) -> Iterator[TrajectorySealed]:
    """The sealed trajectories among ``events`` (anything else is ignored)."""
    for event in events:
        if isinstance(event, TrajectorySealed):
            yield event


def read_events_file(path: Path) -> tuple[list[Event], list[str]]:
    """Events of a JSON-lines file plus one error line per unreadable line."""
    events: list[Event] = []
    errors: list[str] = []
    with path.open("rb") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                event = decode(line)
            except DecodeError as exc:
                errors.append(f"{path}:{number}: {exc}")
                continue
            if isinstance(event, Event):
                events.append(event)
    return events, errors


def export_events(events: Iterable[Any], args: argparse.Namespace,
                  trajectories: list[TrajectorySealed] | None = None) -> ExportReport:
    """Export the sealed trajectories among ``events`` (or ``trajectories``) as ``args`` say;
    each row carries its run's ground truth when the run's submission is among ``events``."""
    events = list(events)
    source = getattr(args, "reward_source", "ground_truth")
    options = SampleOptions(
        invalid_turn_penalty=args.invalid_turn_penalty, sft_min_score=args.sft_min_score,
        reward_source=source, regraded=regraded_rewards(events) if source == REGRADED else {},
    )
    truths = {e.run_id: e.ground_truth for e in events if isinstance(e, ProblemSubmitted)}
    return export_trajectories(
        trajectories_of(events) if trajectories is None else trajectories, layout=args.layout, fmt=args.fmt,
        out=args.out, options=options, ground_truths=truths,
    )


RUN_SUBJECTS = (SEALED_TRAJECTORIES, f"{RUN_PREFIX}.*.problem.submitted", f"{RUN_PREFIX}.*.run.started")
"""What an export reads from the log: the trajectories, and what the filters and rows need of their runs."""
REGRADES = (f"{RUN_PREFIX}.*.answer.graded", f"{RUN_PREFIX}.*.answer.regraded")
"""Read too when the reward is the regraded one."""


NEEDED = (TrajectorySealed, ProblemSubmitted, RunStarted)
REGRADED_KINDS = (AnswerGraded, AnswerRegraded)


async def _log_events(settings: Any, *, regraded: bool = False) -> tuple[list[Event], list[str]]:
    """Every sealed trajectory recorded in the event log with its run's submission and start
    (and with ``regraded``, every grade and regrade), plus one line per unreadable message."""
    runtime = await open_runtime(settings, start_server=True, quiet=True)
    unreadable: list[Any] = []
    try:
        events = await _log_events_of(runtime, unreadable, regraded=regraded)
    finally:
        await runtime.close()
    return events, _unreadable_lines(unreadable)


async def _log_events_of(runtime: Any, unreadable: list[Any], *, regraded: bool) -> list[Event]:
    events: list[Event] = []
    for subjects in (*RUN_SUBJECTS, *REGRADES) if regraded else RUN_SUBJECTS:
        events += [record.event async for record in runtime.log.read_all(subjects, unreadable=unreadable)]
    return events


def _unreadable_lines(unreadable: list[Any]) -> list[str]:
    return [f"message seq {found.seq} on {found.subject}: {found.reason}" for found in unreadable]


WIDE_SHARE = 0.25
"""Above this share of the recorded runs, one pass over the log beats reading each chosen run."""


async def _chosen_log_events(settings: Any, args: argparse.Namespace, *,
                             regraded: bool = False) -> tuple[list[Event], list[str], int]:
    """The events an export needs of the runs the filters choose (the index of runs picks them),
    the unreadable messages met, and how many runs are recorded."""
    runtime = await open_runtime(settings, start_server=True, quiet=True)
    unreadable: list[Any] = []
    try:
        index = await open_run_index(runtime.log, settings)
        try:
            chosen, recorded = await _chosen_runs(index, args)
        finally:
            index.close()
        if len(chosen) > WIDE_SHARE * recorded:
            events = [event for event in (await _log_events_of(runtime, unreadable, regraded=regraded))
                      if event.run_id in chosen]
        else:
            kinds = (*NEEDED, *REGRADED_KINDS) if regraded else NEEDED
            tags = [tag_of(kind) for kind in kinds]
            found: list[tuple[int, Event]] = []
            for records in (await read_runs(runtime.log, sorted(chosen), unreadable=unreadable, tags=tags)).values():
                found += [(r.seq, r.event) for r in records]
            events = [event for _, event in sorted(found, key=lambda pair: pair[0])]
    finally:
        await runtime.close()
    return events, _unreadable_lines(unreadable), recorded


async def _chosen_runs(index: RunIndex, args: argparse.Namespace) -> tuple[set[str], int]:
    keep = run_filter(args)
    if getattr(args, "runs", None):
        named = dict.fromkeys(pick_indexed(index, text) for text in args.runs)
        rows = [await index.row(run_id) for run_id in named]
        chosen = {row.run_id for row in rows if row is not None and keep.keeps(row)}
    else:
        chosen = {row.run_id for row in await index.rows(keep)}
    return chosen, index.count()


def filters_given(args: argparse.Namespace) -> list[str]:
    """The run filters on the command line, as the user wrote them."""
    given = [f"--run {run}" for run in getattr(args, "runs", None) or []]
    for flag, dest in (("--dataset", "dataset"), ("--model", "filter_model"), ("--workflow", "workflow")):
        if getattr(args, dest, None):
            given.append(f"{flag} {getattr(args, dest)}")
    given += [f"--{dest} {getattr(args, dest).isoformat(timespec='minutes')}" for dest in ("since", "until")
              if getattr(args, dest, None)]
    return given


def select_trajectories(events: list[Event], args: argparse.Namespace) -> list[TrajectorySealed]:
    """The sealed trajectories among ``events`` whose runs pass the filters in ``args``."""
    trajectories = list(trajectories_of(events))
    if not filters_given(args):
        return trajectories
    runs = run_rows(events)
    wanted = {pick_run_id(runs.keys(), text) for text in args.runs} if getattr(args, "runs", None) else None
    keep = run_filter(args)
    return [t for t in trajectories if (wanted is None or t.run_id in wanted)
            and keep.keeps(runs.get(t.run_id) or trajectory_row(t))]


def run_rows(events: list[Event]) -> dict[str, RunRow]:
    """A summary row per run whose submission is among ``events`` (from its submission and start)."""
    by_run: dict[str, list[Recorded]] = {}
    for event in events:
        if isinstance(event, ProblemSubmitted | RunStarted):
            records = by_run.setdefault(event.run_id, [])
            records.append(Recorded(len(records) + 1, "", event))
    return {run_id: run_row(run_id, records) for run_id, records in by_run.items()
            if any(isinstance(r.event, ProblemSubmitted) for r in records)}


def trajectory_row(t: TrajectorySealed) -> RunRow:
    """What a trajectory alone tells of its run (an events file may hold trajectories only)."""
    return RunRow(run_id=t.run_id, started=t.occurred_at.isoformat(), workflow="?", model=t.model,
                  dataset=t.data_source, data_source=t.data_source, status="?", score=t.score, answer=None,
                  duration_s=None, steps=len(t.turns), events=0, question="", unreadable=0)


def _export_whole(events: list[Event], args: argparse.Namespace,
                  trajectories: list[TrajectorySealed]) -> ExportReport | None:
    """Export into a file beside ``--out`` that replaces it only when it holds a row: an export whose
    every trajectory is skipped writes nothing (an earlier file stays as it was) and says why; None then."""
    out = Path(args.out)
    partial = out.with_name(f".{out.name}.partial")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        report = export_events(events, argparse.Namespace(**{**vars(args), "out": partial}), trajectories)
        if report.rows:
            os.replace(partial, out)
            return report
    except OSError as exc:
        print(f"apollo export: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
        return None
    finally:
        partial.unlink(missing_ok=True)
    kept = f" ({out} is left as it was)" if out.exists() else ""
    print(f"apollo export: no sample to write: all {report.trajectories} trajectories were skipped; nothing written"
          f"{kept}", file=sys.stderr)
    for line in skip_lines(report.skipped):
        print(line, file=sys.stderr)
    return None


def run_export(args: argparse.Namespace, settings: Any = None) -> int:
    """CLI handler: 0 on success, 1 when the input cannot be read."""
    errors: list[str] = []
    recorded: int | None = None
    if args.events is None and filters_given(args):
        try:
            events, errors, recorded = asyncio.run(
                _chosen_log_events(settings, args, regraded=args.reward_source == REGRADED))
        except EngineError as exc:
            print(f"apollo export: {exc}", file=sys.stderr)
            return 1
    elif args.events is None:
        events, errors = asyncio.run(_log_events(settings, regraded=args.reward_source == REGRADED))
    else:
        try:
            events, errors = read_events_file(args.events)
        except OSError as exc:
            print(f"apollo export: cannot read {args.events}: {exc}", file=sys.stderr)
            return 1
        errors = [f"line {error}" for error in errors]
    for error in errors:
        print(f"apollo export: skipped unreadable {error}", file=sys.stderr)
    try:  # runs chosen by the index are the selection already
        trajectories = list(trajectories_of(events)) if recorded is not None else select_trajectories(events, args)
    except EngineError as exc:
        print(f"apollo export: {exc}", file=sys.stderr)
        return 1
    if not trajectories and filters_given(args):
        total = (f"{recorded} runs recorded" if recorded is not None
                 else f"{sum(1 for _ in trajectories_of(events))} in all")
        print(f"apollo export: no sealed trajectory matches {' '.join(filters_given(args))} "
              f"({total}); nothing written", file=sys.stderr)
        return 1
    if not trajectories:
        print("apollo export: no sealed trajectory is recorded "
              f"({'in ' + str(args.events) if args.events is not None else 'in the event log'}); nothing written",
              file=sys.stderr)
        return 1
    report = _export_whole(events, args, trajectories)
    if report is None:
        return 1
    summary = {
        "out": str(args.out),
        "rows": report.rows,
        "trajectories": report.trajectories,
        "skipped": len(report.skipped),
        "unreadable_lines": len(errors),
    }
    print(json.dumps(summary))
    for line in skip_lines(report.skipped):
        print(line, file=sys.stderr)
    return 0
