"""`apollo runs` and `apollo show`: reading recorded runs."""

from __future__ import annotations

import json
import sys
from typing import Any

from engine.bootstrap import open_runtime
from engine.commands import outcome, run_events
from engine.config import Settings
from engine.render import timeline_line
from events.codec import to_builtins
from events.run import ProblemSubmitted


async def list_runs(settings: Settings, *, as_json: bool) -> int:
    runtime = await open_runtime(settings, start_server=True)
    try:
        rows = []
        for run_id in await runtime.log.run_ids():
            records = await runtime.log.read_run(run_id)
            rows.append(_row(run_id, records))
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
    return 0


def _row(run_id: str, records: list[Any]) -> dict[str, Any]:
    result = outcome(records)
    question = next((r.event.question for r in records if isinstance(r.event, ProblemSubmitted)), "")
    return {"run_id": run_id, "status": result["status"], "score": result.get("score"),
            "answer": result.get("answer"), "events": len(records), "question": " ".join(question.split())}


async def show_run(settings: Settings, run_id: str, *, as_json: bool, html: str | None) -> int:
    runtime = await open_runtime(settings, start_server=True)
    try:
        records = await run_events(runtime, run_id)
        runs = [records]
        parent = getattr(records[0].event, "parent_run_id", None)
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
        return 0
    for record in records:
        print(timeline_line(record))
    from handlers.evolve.metrics import branch_summary

    for line in branch_summary([record.event for record in records]):
        print(line)  # a multi-model evolve run: each branch's result, the chosen one marked
    return 0
