"""`apollo runs` and `apollo show`: reading recorded runs."""

from __future__ import annotations

import json
import sys
from typing import Any

from engine.bootstrap import open_runtime
from engine.commands import outcome
from engine.config import Settings
from engine.errors import RunNotFound
from engine.render import timeline_line
from events.codec import to_builtins
from events.record import Unreadable
from events.run import ProblemSubmitted


async def list_runs(settings: Settings, *, as_json: bool) -> int:
    runtime = await open_runtime(settings, start_server=True)
    try:
        rows = []
        for run_id in await runtime.log.run_ids():
            skipped: list[Unreadable] = []
            records = await runtime.log.read_run(run_id, unreadable=skipped)
            rows.append(_row(run_id, records, skipped))
    finally:
        await runtime.close()
    if as_json:
        print(json.dumps(rows))
        return 0
    if not rows:
        print("no runs recorded yet", file=sys.stderr)
        return 0
    print(f"{'RUN':<36} {'STATUS':<10} {'SCORE':>5} {'EVENTS':>6}  QUESTION")
    for row in rows:
        score = "-" if row["score"] is None else f"{row['score']:g}"
        print(f"{row['run_id']:<36} {row['status']:<10} {score:>5} {row['events']:>6}  {row['question'][:60]}")
    for row in rows:
        if row["unreadable"]:
            print(f"{row['run_id']}: {row['unreadable']} unreadable record(s) skipped "
                  f"(`apollo show {row['run_id']}` lists them)", file=sys.stderr)
    return 0


def _row(run_id: str, records: list[Any], unreadable: list[Unreadable]) -> dict[str, Any]:
    result = outcome(records)
    question = next((r.event.question for r in records if isinstance(r.event, ProblemSubmitted)), "")
    status = result["status"] if records else "unreadable"
    return {"run_id": run_id, "status": status, "score": result.get("score"),
            "answer": result.get("answer"), "events": len(records), "question": " ".join(question.split()),
            "unreadable": len(unreadable)}


async def show_run(settings: Settings, run_id: str, *, as_json: bool, html: str | None) -> int:
    runtime = await open_runtime(settings, start_server=True)
    skipped: list[Unreadable] = []
    try:
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
        from replay.timeline_html import render_html

        with open(html, "w", encoding="utf-8") as handle:  # noqa: ASYNC230 - one file, after the reads
            handle.write(render_html(runs))
        print(f"wrote {html}", file=sys.stderr)
    if as_json:
        for record in records:
            print(json.dumps({"seq": record.seq, "subject": record.subject, "event": to_builtins(record.event)}))
        for found in skipped:  # not on stdout: its lines stay a history `apollo replay --file` reads
            print(f"apollo show: seq {found.seq} on {found.subject} is unreadable: {found.reason}", file=sys.stderr)
        return 0
    lines = [(record.seq, timeline_line(record)) for record in records]
    lines += [(found.seq, unreadable_line(found)) for found in skipped]
    for _, line in sorted(lines, key=lambda pair: pair[0]):
        print(line)
    from handlers.evolve.metrics import branch_summary

    for line in branch_summary([record.event for record in records]):
        print(line)  # a multi-model evolve run: each branch's result, the chosen one marked
    return 0


def unreadable_line(found: Unreadable) -> str:
    """A timeline line for a stored message that cannot be read as an event."""
    return f"{found.seq:>7}  {'?':<12}  {'UNREADABLE':<22} {found.subject}: {found.reason}"
