"""`apollo submit` (hand one problem to a running engine) and `apollo solve` (run it to the end,
stream its steps, print the graded answer)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from engine.app.bootstrap import open_runtime, running_engine_url
from engine.app.operations import (
    local_workers,
    new_run_id,
    outcome,
    submission,
    submit,
    warn_if_no_worker,
    watch_run,
)
from engine.cli.endpoint_probe import probe_run_endpoints
from engine.cli.left_running import say_left_running, timed_out
from engine.cli.problem_args import (
    add_problem_arguments,
    apply_model_flags,
    config_overrides,
    problem_fields,
)
from engine.cli.render import numbered_progress
from engine.cli.submitted_settings import announce, submitted_config
from engine.cli.taken_run_ids import check_run_id
from engine.config.settings import Settings


def register(subparsers: Any) -> None:
    submit_parser = subparsers.add_parser("submit", help="submit one problem to a running engine; prints the run id")
    add_problem_arguments(submit_parser)
    submit_parser.set_defaults(handler=_cmd_submit)

    solve_parser = subparsers.add_parser("solve", help="solve one problem end to end and print the graded answer")
    add_problem_arguments(solve_parser)
    solve_parser.add_argument("--json", action="store_true", help="print one JSON object")
    solve_parser.add_argument("--timeout", type=float, default=None, help="give up after this many seconds")
    solve_parser.set_defaults(handler=_cmd_solve)


async def _cmd_submit(args: argparse.Namespace, settings: Settings) -> int:
    settings = apply_model_flags(settings, args)
    config = submitted_config(settings, config_overrides(args))
    runtime = await open_runtime(settings, start_server=False)
    try:
        if not args.no_probe:
            await probe_run_endpoints(config, args.workflow, settings, nothing="nothing was submitted")
        run_id = args.run_id or new_run_id()
        event = submission(run_id, args.question, ground_truth=args.answer, workflow=args.workflow,
                           config=config, **problem_fields(args))
        again = args.run_id is not None and await check_run_id(runtime.log, event, flag="--run-id",
                                                               nothing="nothing was submitted")
        if not again:
            await submit(runtime.log, event)
    finally:
        await runtime.close()
    # said once it is submitted: a refusal stays the command's one line
    print(announce("submit", config["models"]["policy"], settings.nats.url or running_engine_url(settings)),
          file=sys.stderr)
    if again:
        print(already_said("submit", run_id), file=sys.stderr)
    print(run_id)
    return 0


async def _cmd_solve(args: argparse.Namespace, settings: Settings) -> int:
    return await solve(apply_model_flags(settings, args), args, config_overrides(args))

async def solve(settings: Settings, args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    """Use a running engine when there is one; otherwise run everything in this process."""
    engine_url = settings.nats.url or running_engine_url(settings)
    engine_running = engine_url is not None
    config = submitted_config(settings, overrides)  # travels with the run: any worker runs these settings
    if not args.json:
        print(announce("solve", config["models"]["policy"], engine_url), file=sys.stderr)
    if not args.no_probe:
        await probe_run_endpoints(config, args.workflow, settings, nothing="nothing was submitted")
    runtime = await open_runtime(settings, start_server=True)
    try:
        async with local_workers(runtime, enabled=not engine_running):
            run_id = args.run_id or new_run_id("solve")
            event = submission(run_id, args.question, ground_truth=args.answer,
                               workflow=args.workflow, config=config, **problem_fields(args))
            if args.run_id is not None and await check_run_id(runtime.log, event, flag="--run-id",
                                                              nothing="nothing was submitted"):
                print(already_said("solve", run_id, "; what that run recorded follows"), file=sys.stderr)
            else:
                await submit(runtime.log, event)
            hint = asyncio.create_task(warn_if_no_worker(runtime, run_id, f"NATS at {engine_url}")) \
                if engine_running else None
            try:
                records = await watch_run(runtime, run_id, None if args.json else numbered_progress(),
                                          timeout=args.timeout)
            except asyncio.CancelledError:  # Ctrl-C: the run itself is not stopped by that
                say_left_running("solve", run_id, engine_running=engine_running)
                raise
            except TimeoutError as exc:  # --timeout: nor by that
                raise timed_out(exc, run_id, engine_running=engine_running) from None
            finally:
                if hint is not None:
                    hint.cancel()
    finally:
        await runtime.close()
    result = outcome(records)
    if args.json:
        print(json.dumps(as_listed(result)))
    else:
        print_result(result)
    return 1 if result["incomplete"] else 0


def already_said(command: str, run_id: str, then: str = "") -> str:
    """The line a command prints when the run it names is recorded already with the same submission."""
    return (f"apollo {command}: run {run_id} was submitted before with this question and these settings: "
            f"nothing was submitted again{then}")


def as_listed(result: dict[str, Any]) -> dict[str, Any]:
    """``solve --json``'s object: a run that could not be completed (its model server failed) is ``failed``
    with no score, as `apollo runs` lists it, not ``completed`` with a score of 0."""
    if not result["incomplete"]:
        return result
    status = "failed" if result["status"] == "completed" else result["status"]
    return {**result, "status": status, "score": None}


def print_result(result: dict[str, Any]) -> None:
    print()
    if result["incomplete"] and result["status"] == "completed":
        print(f"run:     {result['run_id']} (could not be completed: {result.get('done_reason')})")
    else:
        print(f"run:     {result['run_id']} ({result['status']}, {result.get('done_reason')})")
    answer = result.get("answer")
    print(f"answer:  {'no answer' if answer is None else answer}")
    score = result.get("score")
    if result["incomplete"]:
        print("grade:   none: the run could not be completed, so its score says nothing about the model")
    elif result.get("method") == "ungraded":
        print("grade:   ungraded (no --answer given)")
    elif score is not None:
        verdict = "correct" if score > 0 else "wrong"
        print(f"grade:   {verdict} (score {score:g}, {result.get('method')})")
    if result.get("steps") is not None:
        print(f"steps:   {result['steps']}")
    elif result.get("rounds"):
        failed = result.get("rounds_failed")
        print(f"rounds:  {result['rounds']}" + (f" ({failed} could not be completed)" if failed else ""))
    if result["status"] in ("failed", "cancelled"):
        print(f"reason:  {result.get('reason')}")
    elif (result["incomplete"] or result.get("rounds_failed")) and result.get("failure"):
        print(f"reason:  {result['failure']}")
