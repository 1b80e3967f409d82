"""`apollo regrade`: grade recorded answers again, with no model call, and report what flipped.

``apollo regrade [RUN...] [filters of apollo runs] [--grader NAME] [--json]`` re-computes
every ground-truth grade of the chosen runs with the current version of each run's grader
(or of ``--grader``), appends ``answer.regraded`` for each grade computed, and prints the
flip report (docs/audit.md). Run it with the worker role's credentials: it writes run events.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from typing import Any

import msgspec

from engine.app.bootstrap import Runtime, open_runtime
from engine.cli.problem_args import positive_int
from engine.cli.run_filters import add_run_filter_arguments, run_filter
from engine.cli.run_lookup import open_run_index, pick_indexed
from engine.config.settings import Settings
from engine.console.status_line import StatusLine, bar
from engine.grading.regrade import Regrader, RunRegrade
from engine.grading.router import RegistryGrader
from engine.plugins import load_plugins
from handlers.catalog import Catalog
from handlers.grading.registry import grader_names
from replay.audit.flip_text import render_report
from replay.audit.flips import flip_report
from replay.audit.plan import SKIP_KINDS, RunPlan
from replay.run_table import STATUSES, RunFilter, RunRow, select

FILTERS = ("dataset", "filter_model", "workflow", "since", "until", "status")
"""Where the run filters of the command line land (engine/cli/run_filters.py, and --status)."""

SHOWN_RUNS = 5
"""Run ids named on a skip line; the rest are counted."""

NOT_COMPLETED = "not_completed"
"""A run its model server or the engine failed (`apollo runs` lists it as failed, with no score): its grade
of 0 judged no answer, so it is neither regraded nor counted among the grades."""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("regrade", help="grade recorded answers again (no model call) and report what flipped")
    p.add_argument("runs", nargs="*", metavar="RUN", help="runs (or unambiguous id prefixes); default: every run")
    add_run_filter_arguments(p)
    p.add_argument("--status", choices=STATUSES, help="only runs with this status")
    p.add_argument("--limit", type=positive_int, help="only the newest N runs that match")
    p.add_argument("--grader", metavar="NAME", help="grade with this grader (default: the one each run names)")
    p.add_argument("--json", action="store_true", help="print the flip report as JSON")
    p.set_defaults(handler=_cmd_regrade)


async def _cmd_regrade(args: argparse.Namespace, settings: Settings) -> int:
    catalog = load_plugins(settings).catalog()
    if args.grader is not None and args.grader not in catalog.graders:
        print(f"apollo regrade: {unknown_grader(args.grader, catalog)}", file=sys.stderr)
        return 2
    keep = run_filter(args)
    runtime = await open_runtime(settings, start_server=True, quiet=True)
    try:
        rows, missing = await _chosen_runs(runtime, args.runs, keep, args.limit)
        results = await _regrade_all(runtime, rows, catalog, args.grader)
    finally:
        await runtime.close()
    for text in missing:
        print(f"apollo regrade: unknown run {text!r}: no events recorded", file=sys.stderr)
    if not rows and not missing:
        filtered = args.runs or any(getattr(args, name, None) for name in FILTERS)
        print(f"apollo regrade: {'no runs match these filters' if filtered else 'no runs recorded yet'}",
              file=sys.stderr)
    for line in skip_lines(results) + [failure for result in results for failure in result.failures]:
        print(f"apollo regrade: {line}", file=sys.stderr)
    report = flip_report([o for r in results for o in r.outcomes], grader=args.grader,
                         versions=_versions_used(results), skipped=_skipped(results))
    if report.already:
        print(f"apollo regrade: {report.already} grades were already re-graded at this version (by an earlier or "
              "interrupted regrade): nothing recorded twice", file=sys.stderr)
    failed = sum(len(result.failures) for result in results)
    if failed:  # not computed, so not recorded: what was asked did not all happen
        print(f"apollo regrade: {failed} grade{'' if failed == 1 else 's'} could not be computed: nothing recorded "
              "for them (the next regrade tries them again)", file=sys.stderr)
    if args.json:
        print(json.dumps(msgspec.to_builtins(report)))
    else:
        print("\n".join(render_report(report)))
    return 1 if missing or failed else 0


def unknown_grader(name: str, catalog: Catalog) -> str:
    """One line naming the graders there are."""
    plugins = sorted(set(catalog.graders) - set(grader_names()))
    extra = f"; from plugins: {', '.join(plugins)}" if plugins else ""
    return f"unknown grader {name!r} (built in: {', '.join(grader_names())}{extra})"


async def _chosen_runs(runtime: Runtime, texts: list[str], keep: RunFilter,
                       limit: int | None) -> tuple[list[RunRow], list[str]]:
    """The runs named (every run when none is) that pass the filters, newest first; plus the names
    that match no recorded run. The index of runs chooses them."""
    index = await open_run_index(runtime.log, runtime.settings)
    try:
        if not texts:
            return await index.rows(keep, limit=limit), []
        missing: list[str] = []
        rows: dict[str, RunRow] = {}
        for text in texts:
            run_id = pick_indexed(index, text)
            row = await index.row(run_id)
            if row is None:
                missing.append(run_id)
            else:
                rows[run_id] = row
    finally:
        index.close()
    return select(rows.values(), keep, limit), missing


async def _regrade_all(runtime: Runtime, rows: list[RunRow], catalog: Catalog, name: str | None) -> list[RunRegrade]:
    """Regrade ``rows`` one run at a time (each run's records appended before the next is read),
    with a progress line."""
    if not rows:
        return []
    # deferred: the pool pulls in multiprocessing and the graders, which a bad flag never needs
    from engine.grading.pool import ProcessPoolGrader

    grading = runtime.settings.grading
    grader = RegistryGrader(ProcessPoolGrader(numeric_tolerance=grading.numeric_tolerance), catalog=catalog,
                            settings=grading.as_settings())
    regrader = Regrader(runtime.log, grader, name=name)
    progress = RegradeProgress(len(rows))
    results: list[RunRegrade] = []
    try:
        for row in rows:
            if row.status == "failed":
                results.append(RunRegrade(plan=RunPlan(
                    run_id=row.run_id, skipped=NOT_COMPLETED,
                    reason="could not be completed (its model server or the engine failed; `apollo runs` lists it "
                           "as failed, with no score): not regraded and not counted among the grades")))
            else:
                records = await runtime.log.read_run(row.run_id, unreadable=[])
                results.append(await regrader.regrade(row.run_id, records, row))
            progress.advance(results[-1])
    finally:
        progress.close()
        grader.close()
    return results


class RegradeProgress:
    """``apollo regrade: [###...] 12/40 runs, 10 re-graded, 2 already, 1 flipped``."""

    def __init__(self, total: int, *, stream: Any = None, interval: float = 5.0) -> None:
        self.total = total
        self.status = StatusLine(stream, interval=interval)
        self.runs = self.regraded = self.already = self.flipped = 0

    def advance(self, result: RunRegrade) -> None:
        self.runs += 1
        self.regraded += sum(1 for o in result.outcomes if o.status == "regraded")
        self.already += sum(1 for o in result.outcomes if o.status == "already")
        self.flipped += sum(1 for o in result.outcomes if o.flip is not None)
        self.status.show(self.line(), force=self.runs == self.total)

    def line(self) -> str:
        return (f"apollo regrade: {bar(self.runs, self.total, 30)} {self.runs}/{self.total} runs, "
                f"{self.regraded} re-graded, {self.already} already, {self.flipped} flipped")

    def close(self) -> None:
        self.status.end()


def skip_lines(results: Iterable[RunRegrade]) -> list[str]:
    """One line per distinct reason runs were skipped, naming a few of them."""
    by_reason: dict[str, list[str]] = {}
    for result in results:
        if result.plan.skipped is not None:
            by_reason.setdefault(result.plan.reason, []).append(result.plan.run_id)
    lines = []
    for reason, runs in by_reason.items():
        named = ", ".join(runs[:SHOWN_RUNS]) + (f" and {len(runs) - SHOWN_RUNS} more" if len(runs) > SHOWN_RUNS else "")
        subject = f"run {named}" if len(runs) == 1 else f"{len(runs)} runs ({named})"
        lines.append(f"{subject}: {reason}; nothing recorded")
    return lines


def _skipped(results: Iterable[RunRegrade]) -> dict[str, list[str]]:
    skipped: dict[str, list[str]] = {kind: [] for kind in (*SKIP_KINDS, NOT_COMPLETED)}
    for result in results:
        if result.plan.skipped is not None:
            skipped[result.plan.skipped].append(result.plan.run_id)
    return skipped


def _versions_used(results: Iterable[RunRegrade]) -> dict[str, str]:
    return {task.grader: task.version for result in results for task in result.plan.tasks}

