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
from engine.cli.run_lookup import open_run_index, pick_indexed
from engine.config.settings import Settings
from engine.errors import EngineError, RunNotFound
from events.codec import to_builtins
from events.record import Recorded, Unreadable
from events.run import RunStarted
from handlers.evolve.round_accuracy import branch_summary
from replay.run_table import STATUSES, RunFilter, render_table
from replay.timeline_html import render_html
from replay.whole_prompts import whole_prompt_records


def register(subparsers: Any) -> None:
    runs = subparsers.add_parser("runs", help="list recorded runs, newest first")
    runs.add_argument("--json", action="store_true", help="print the rows as one JSON list")
    add_run_filter_arguments(runs)
    runs.add_argument("--status", choices=STATUSES)
    runs.add_argument("--limit", type=positive_int, help="only the newest N runs that match")
    runs.add_argument("--before", metavar="RUN", help="only runs listed after RUN (an id or prefix): the next page")
    runs.set_defaults(handler=_cmd_runs)

    show = subparsers.add_parser("show", help="a run's timeline")
    show.add_argument("run_id")
    show.add_argument("--json", action="store_true", help="print the run's events as JSON lines")
    show.add_argument("--html", metavar="FILE", help="write an offline HTML timeline")
    show.set_defaults(handler=_cmd_show)


async def _cmd_runs(args: argparse.Namespace, settings: Settings) -> int:
    return await list_runs(settings, run_filter(args), limit=args.limit, as_json=args.json, before=args.before)


async def _cmd_show(args: argparse.Namespace, settings: Settings) -> int:
    return await show_run(settings, args.run_id, as_json=args.json, html=args.html)


async def list_runs(settings: Settings, keep: RunFilter | None = None, *, limit: int | None = None,
                    as_json: bool = False, before: str | None = None) -> int:
    """Print the recorded runs newest first, narrowed by ``keep`` and ``limit``, older than run ``before``.

    The rows come from the index of runs (caught up first), so the cost follows the rows shown.
    """
    runtime = await open_runtime(settings, start_server=True, quiet=True)
    try:
        index = await open_run_index(runtime.log, settings)
        try:
            after = pick_indexed(index, before) if before is not None else None
            if after is not None and index.pick(after, 1)[1] != 1:
                msg = f"--before {before!r}: no such run recorded"
                raise RunNotFound(msg)
            shown = await index.row_texts(keep, limit=None if limit is None else limit + 1, before=after)
            recorded = index.count() if not shown else len(shown)
        finally:
            index.close()
    finally:
        await runtime.close()
    older = limit is not None and len(shown) > limit  # one row more than shown was asked for: is there one?
    shown = shown[:limit]
    if as_json:
        print("[" + ", ".join(text for text, _ in shown) + "]")
        return 0
    if not shown:
        print(_nothing_shown(recorded, after, filtered=(keep or RunFilter()) != RunFilter()), file=sys.stderr)
        return 0
    rows = [row for _, row in shown]
    print(render_table(rows))
    for row in rows:
        if row.unreadable:
            print(f"{row.run_id}: {row.unreadable} unreadable record(s) skipped "
                  f"(`apollo show {row.run_id}` lists them)", file=sys.stderr)
    if older:
        print(f"older runs: add --before {rows[-1].run_id}", file=sys.stderr)
    return 0


def _nothing_shown(recorded: int, before: str | None, *, filtered: bool) -> str:
    if not recorded:
        return "no runs recorded yet"
    where = f" before {before}" if before else ""
    return f"no runs{where} match these filters" if filtered else f"no runs{where}"


async def show_run(settings: Settings, run_id: str, *, as_json: bool, html: str | None) -> int:
    """Print a run's timeline, its events numbered 1..n (the numbers `apollo fork --at` takes).

    With ``html`` only the page is written; ``as_json`` prints JSON lines (``n`` is the
    number, ``seq`` the stream sequence a history file keeps).
    """
    runtime = await open_runtime(settings, start_server=True, quiet=True)
    skipped: list[Unreadable] = []
    try:
        index = await open_run_index(runtime.log, settings)
        try:
            run_id = pick_indexed(index, run_id)
        finally:
            index.close()
        records = whole_prompt_records(await runtime.log.read_run(run_id, unreadable=skipped))
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
