"""``apollo export``: training samples from sealed trajectories, as Parquet or JSON lines."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from events import DecodeError, Event, TrajectorySealed, decode
from replay.training.export import FORMATS, ExportReport, export_trajectories
from replay.training.samples import INVALID_TURN_PENALTY, LAYOUTS, SampleOptions


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


def export_events(events: Iterable[Any], args: argparse.Namespace) -> ExportReport:
    """Export the sealed trajectories among ``events`` as ``args`` say (the log-facing entry)."""
    options = SampleOptions(
        invalid_turn_penalty=args.invalid_turn_penalty, sft_min_score=args.sft_min_score
    )
    return export_trajectories(
        trajectories_of(events), layout=args.layout, fmt=args.fmt, out=args.out, options=options
    )


async def _log_events(settings: Any) -> tuple[list[Event], list[str]]:
    """Every sealed trajectory recorded in the event log, plus one line per unreadable one."""
    from engine.bootstrap import open_runtime
    from events.subjects import SEALED_TRAJECTORIES

    runtime = await open_runtime(settings, start_server=True)
    unreadable: list[Any] = []
    try:
        events = [record.event async for record in runtime.log.read_all(SEALED_TRAJECTORIES, unreadable=unreadable)]
    finally:
        await runtime.close()
    return events, [f"message seq {found.seq} on {found.subject}: {found.reason}" for found in unreadable]


def run_export(args: argparse.Namespace, settings: Any = None) -> int:
    """CLI handler: 0 on success, 1 when the input cannot be read."""
    errors: list[str] = []
    if args.events is None:
        events, errors = asyncio.run(_log_events(settings))
    else:
        try:
            events, errors = read_events_file(args.events)
        except OSError as exc:
            print(f"apollo export: cannot read {args.events}: {exc}", file=sys.stderr)
            return 1
        errors = [f"line {error}" for error in errors]
    for error in errors:
        print(f"apollo export: skipped unreadable {error}", file=sys.stderr)
    report = export_events(events, args)
    summary = {
        "out": report.path,
        "rows": report.rows,
        "trajectories": report.trajectories,
        "skipped": len(report.skipped),
        "unreadable_lines": len(errors),
    }
    print(json.dumps(summary))
    for skipped in report.skipped:
        print(f"apollo export: skipped {skipped['traj_uid']}: {skipped['reason']}", file=sys.stderr)
    return 0
