"""`apollo run --dataset FILE`: many problems, K samples each, resumable, with metrics."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from engine.argtypes import whole_number
from engine.bootstrap import Runtime, open_runtime, running_engine_url
from engine.commands import local_workers, submission, submit
from engine.config import Settings
from engine.datasets import DatasetError, Problem, group_id_for, load_problems, run_id_for
from engine.errors import EngineError
from engine.processes import freeze_startup_heap
from events.subjects import RUN_PREFIX
from replay.metrics import compute_metrics, render_table, to_jsonable
from replay.results import result_row, sample_result


def register(subparsers: Any) -> None:
    run = subparsers.add_parser("run", help="run a dataset: K samples per problem, metrics at the end")
    run.add_argument("--dataset", required=True, help="JSONL or parquet file of problems")
    run.add_argument("--limit", type=_positive, help="only the first N usable problems")
    run.add_argument("--samples", type=_positive, default=1, help="samples per problem (K)")
    run.add_argument("--concurrency", type=_positive, default=16, help="runs in flight at once")
    run.add_argument("--workflow", default="reason", choices=["reason", "evolve"])
    run.add_argument("--out", help="results JSONL (default: results/<dataset>-<workflow>.jsonl)")
    run.add_argument("--model", help="policy model name (or scripted:FILE)")
    run.add_argument("--model-url", help="OpenAI-compatible base URL of the policy model")
    run.add_argument("--max-steps", type=_positive, help="step budget of each episode")
    run.add_argument("--json", action="store_true", help="print the metrics as JSON")
    run.set_defaults(handler=_cmd_run)


_positive = whole_number(1)


async def _cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    from engine.cli import apply_model_flags

    settings = apply_model_flags(settings, args)
    try:
        load = load_problems(args.dataset, limit=args.limit)
    except DatasetError as exc:
        raise EngineError(str(exc)) from exc
    for rejected in load.rejected[:5]:
        print(f"apollo run: skipped row {rejected.line}: {rejected.reason}", file=sys.stderr)
    if len(load.rejected) > 5:
        print(f"apollo run: ... {len(load.rejected) - 5} more rows skipped", file=sys.stderr)
    overrides = {"episode": {"max_steps": args.max_steps}} if args.max_steps else {}
    name = f"{load.name}-{args.workflow}"
    jobs = [(problem, sample) for problem in load.problems for sample in range(args.samples)]
    engine_running = bool(settings.nats.url or running_engine_url(settings))
    runtime = await open_runtime(settings, start_server=True)
    freeze_startup_heap()  # a dataset run lasts: its workers need not rescan start-up objects
    try:
        async with local_workers(runtime, enabled=not engine_running):
            run_ids = await _run_all(runtime, name, jobs, args, overrides)
        histories = {run_id: [r.event for r in await runtime.log.read_run(run_id)] for run_id in run_ids}
    finally:
        await runtime.close()
    rows = [result_row(run_id, events) for run_id, events in histories.items()]
    results = [result for result in map(sample_result, histories.values()) if result is not None]
    out = Path(args.out or f"results/{name}.jsonl")
    # One file, written once the runs are done: nothing else waits on the loop meanwhile.
    out.parent.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240
    out.write_text("".join(json.dumps(row) + "\n" for row in rows))  # noqa: ASYNC240
    report = compute_metrics(results, k=args.samples)
    evolved = _evolve_report(histories, out) if args.workflow == "evolve" else None
    if args.json:
        print(json.dumps({**to_jsonable(report), "evolve": evolved} if evolved else to_jsonable(report)))
    else:
        print(render_table(report))
        if evolved:
            from handlers.evolve.metrics import render

            print(f"\n{render(evolved)}\nrounds: {out.with_name(out.stem + '-rounds.jsonl')}")
        print(f"\nresults: {out}  ({len(rows)} runs)")
    return 0


def _evolve_report(histories: dict[str, Any], out: Path) -> dict[str, Any]:
    """Per-round correctness, verifier confusion matrices, success per data source (JSONL too)."""
    from handlers.evolve.metrics import evolve_metrics, round_rows

    rows = [row for run_id, events in histories.items() for row in round_rows(run_id, events)]
    out.with_name(out.stem + "-rounds.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return evolve_metrics(histories)


async def _run_all(
    runtime: Runtime, name: str, jobs: list[tuple[Problem, int]], args: argparse.Namespace,
    overrides: dict[str, Any],
) -> list[str]:
    """Submit with at most ``concurrency`` runs open; finished runs are never redone."""
    run_ids = [run_id_for(name, problem.problem_id, sample) for problem, sample in jobs]
    finished = await _finished_runs(runtime)
    pending = [(rid, job) for rid, job in zip(run_ids, jobs, strict=True) if rid not in finished]
    resumed = len(run_ids) - len(pending)
    progress = _Progress(len(run_ids), resumed)
    open_runs: set[str] = set()
    queue = list(pending)
    while queue or open_runs:
        while queue and len(open_runs) < args.concurrency:
            run_id, (problem, sample) = queue.pop(0)
            if not await runtime.log.read_run(run_id, upto_seq=None):
                await submit(runtime.log, submission(
                    run_id, problem.question, ground_truth=problem.ground_truth,
                    problem_id=problem.problem_id, data_source=problem.data_source,
                    workflow=args.workflow, config=overrides, group_id=group_id_for(name, problem.problem_id),
                    sample_index=sample, group_size=args.samples,
                ))
            open_runs.add(run_id)
        await asyncio.sleep(0.2)
        done = await _finished_runs(runtime)
        newly = open_runs & done
        open_runs -= newly
        progress.advance(len(newly))
    progress.close()
    return run_ids


async def _finished_runs(runtime: Runtime) -> set[str]:
    finished: set[str] = set()
    for tag in ("run.completed", "run.failed"):
        info = await runtime.log.js.stream_info(runtime.log.stream, subjects_filter=f"{RUN_PREFIX}.*.{tag}")
        finished.update(subject.split(".")[2] for subject in (info.state.subjects or {}))
    return finished


class _Progress:
    """A one-line progress bar on stderr (plain lines when not a terminal)."""

    def __init__(self, total: int, resumed: int) -> None:
        self.total = total
        self.done = resumed
        self.tty = sys.stderr.isatty()
        if resumed:
            print(f"apollo run: resuming, {resumed}/{total} runs already finished", file=sys.stderr)
        self._draw()

    def advance(self, count: int) -> None:
        if count:
            self.done += count
            self._draw()

    def _draw(self) -> None:
        width = 30
        filled = int(width * self.done / max(1, self.total))
        line = f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} runs"
        if self.tty:
            print(f"\r{line}", end="", file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.tty:
            print(file=sys.stderr)
