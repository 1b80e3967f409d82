"""`apollo runs` and `apollo show`: reading recorded runs."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from engine.app.bootstrap import open_runtime
from engine.cli.problem_args import positive_int
from engine.cli.render import timeline_line
from engine.cli.run_filters import add_run_filter_arguments, run_filter
from engine.cli.run_lookup import resolve_run_id
from engine.config.settings import Settings
from engine.errors import EngineError, RunNotFound
from events.codec import to_builtins
from events.record import Recorded, Unreadable
from events.run import RunStarted
from handlers.evolve.round_accuracy import branch_summary
from replay.run_table import STATUSES, RunFilter, render_table, run_row, select, to_jsonable
from replay.timeline_html import render_html


def register(subparsers: Any) -> None:
    runs = subparsers.add_parser("runs", help="list recorded runs, newest first")
    runs.add_argument("--json", action="store_true", help="print the rows as one JSON list")
    add_run_filter_arguments(runs)
    runs.add_argument("--status", choices=STATUSES)
    runs.add_argument("--limit", type=positive_int, help="only the newest N runs that match")
    runs.set_defaults(handler=_cmd_runs)

    show = subparsers.add_parser("show", help="a run's timeline")
    show.add_argument("run_id")
    show.add_argument("--json", action="store_true", help="print the run's events as JSON lines")
    show.add_argument("--html", metavar="FILE", help="write an offline HTML timeline")
    show.set_defaults(handler=_cmd_show)


async def _cmd_runs(args: argparse.Namespace, settings: Settings) -> int:
    return await list_runs(settings, run_filter(args), limit=args.limit, as_json=args.json)


async def _cmd_show(args: argparse.Namespace, settings: Settings) -> int:
    return await show_run(settings, args.run_id, as_json=args.json, html=args.html)

async def list_runs(settings: Settings, keep: RunFilter | None = None, *, limit: int | None = None,
                    as_json: bool = False) -> int:
    """Print the recorded runs newest first, narrowed by ``keep`` and ``limit``."""
    runtime = await open_runtime(settings, start_server=True, quiet=True)
    try:
        rows = []
        for run_id in await runtime.log.run_ids():
            skipped: list[Unreadable] = []
            records = await runtime.log.read_run(run_id, unreadable=skipped)
            rows.append(run_row(run_id, records, len(skipped)))
    finally:
        await runtime.close()
    shown = select(rows, keep or RunFilter(), limit)
    if as_json:
        print(json.dumps(to_jsonable(shown)))
        return 0
    if not shown:
        print("no runs match these filters" if rows else "no runs recorded yet", file=sys.stderr)
        return 0
    print(render_table(shown))
    for row in shown:
        if row.unreadable:
            print(f"{row.run_id}: {row.unreadable} unreadable record(s) skipped "
                  f"(`apollo show {row.run_id}` lists them)", file=sys.stderr)
    return 0


async def show_run(settings: Settings, run_id: str, *, as_json: bool, html: str | None) -> int:
    """Print a run's timeline, its events numbered 1..n (the numbers `apollo fork --at` takes).

    With ``html`` only the page is written; ``as_json`` prints JSON lines (``n`` is the
    number, ``seq`` the stream sequence a history file keeps).
    """
    runtime = await open_runtime(settings, start_server=True, quiet=True)
    skipped: list[Unreadable] = []
    try:
        run_id = await resolve_run_id(runtime.log, run_id)
        records = await runtime.log.read_run(run_id, unreadable=skipped)
        if not records and not skipped:
            msg = f"unknown run {run_id!r}: no events recorded"
            raise RunNotFound(msg)
        runs = [records]
        parent = getattr(records[0].event, "parent_run_id", None) if records else None
        if html and parent:
            runs.insert(0, await runtime.log.read_run(parent))  # a fork shows beside its parent
    finally:
        await runtime.close()
    if html:
        try:
            with open(html, "w", encoding="utf-8") as handle:  # noqa: ASYNC230 - one file, after the reads
                handle.write(render_html(runs))
        except OSError as exc:
            msg = f"cannot write {html}: {exc.strerror or exc}"
            raise EngineError(msg) from exc
        print(f"wrote {html}", file=sys.stderr)
    if as_json:
        for number, record in enumerate(records, 1):
            print(json.dumps({"n": number, "seq": record.seq, "subject": record.subject,
                              "event": to_builtins(record.event)}))
        for found in skipped:  # not on stdout: its lines stay a history `apollo replay --file` reads
            print(f"apollo show: seq {found.seq} on {found.subject} is unreadable: {found.reason}", file=sys.stderr)
        return 0
    if html:
        return 0  # the page is the output asked for
    for line in timeline_lines(records, skipped):
        print(line)

    for line in branch_summary([record.event for record in records]):
        print(line)  # a multi-model evolve run: each branch's result, the chosen one marked
    return 0


def timeline_lines(records: list[Recorded], skipped: list[Unreadable]) -> list[str]:
    """The terminal timeline: events numbered 1..n in order, unreadable messages in their place unnumbered."""
    scoped = any(isinstance(record.event, RunStarted) and record.event.workflow == "evolve" for record in records)
    lines = [(record.seq, timeline_line(record, number, scoped=scoped)) for number, record in enumerate(records, 1)]
    lines += [(found.seq, unreadable_line(found)) for found in skipped]
    return [line for _, line in sorted(lines, key=lambda pair: pair[0])]


def unreadable_line(found: Unreadable) -> str:
    """A timeline line for a stored message that cannot be read as an event (it has no number)."""
    return f"{'-':>7}  {'?':<12}  {'UNREADABLE':<22} seq {found.seq} on {found.subject}: {found.reason}"
