"""`apollo rollouts` (the rollout driver) and `apollo policy-sync` (the serving side of weight sync).

``apollo rollouts --dataset F --samples N --max-in-flight G`` submits one GRPO group of N
samples per problem, stamped with the policy's served version, keeping at most G groups
open; with no engine running it runs the workers in this process, as `apollo run` does.
The trainer bounds staleness (``SubscriptionOptions.max_staleness``), see docs/training.md.

``apollo policy-sync --lora-url URL | --reload-url URL | --reload-command CMD`` runs until
Ctrl-C: each ``policy.updated`` makes the endpoint serve the new weights, then
``policy.activated`` is recorded (``policy.update_failed`` when it cannot be). Run it with
the worker role's credentials; deploy/vllm/README.md has the requests it makes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shlex
import sys
from collections.abc import AsyncIterator
from typing import Any

from engine.app.bootstrap import open_runtime, running_engine_url
from engine.app.operations import local_workers
from engine.cli.endpoint_probe import probe_run_endpoints
from engine.cli.problem_args import add_model_arguments, apply_model_flags
from engine.cli.progress import RolloutProgress
from engine.cli.submitted_settings import announce, submitted_config
from engine.config.settings import Settings
from engine.console.argtypes import whole_number
from engine.datasets import load_problems
from engine.errors import EngineError
from engine.rollouts import DriverOptions, RolloutDriver
from engine.runtime.signals import install_signal_handlers
from engine.serving import CommandReloadHook, HttpReloadHook, PolicySync, VllmLoraLoader, WeightLoader
from handlers.workflows import DEFAULT_WORKFLOW, WORKFLOW_NAMES

_positive = whole_number(1)


def register(subparsers: Any) -> None:
    rollouts = subparsers.add_parser(
        "rollouts", help="submit problems x N samples for the served policy version, G groups in flight at most"
    )
    rollouts.add_argument("--dataset", required=True, help="JSONL or parquet file of problems")
    rollouts.add_argument("--limit", type=_positive, help="only the first N usable problems")
    rollouts.add_argument("--samples", type=_positive, required=True, help="samples per problem (the group size)")
    rollouts.add_argument("--max-in-flight", type=_positive, required=True, help="groups open at once, at most")
    rollouts.add_argument("--prefix", default="rollout", help="first part of the run and group ids")
    rollouts.add_argument("--policy", default="default", help="the policy whose served version stamps the groups")
    rollouts.add_argument("--workflow", default=DEFAULT_WORKFLOW, choices=WORKFLOW_NAMES)
    add_model_arguments(rollouts)
    rollouts.add_argument("--json", action="store_true", help="print the summary as JSON")
    rollouts.set_defaults(handler=_cmd_rollouts)

    sync = subparsers.add_parser("policy-sync", help="serve each policy.updated on an endpoint, then record it")
    how = sync.add_mutually_exclusive_group(required=True)
    how.add_argument("--lora-url", metavar="URL", help="vLLM's base URL (http://host:8000/v1): runtime LoRA load")
    how.add_argument("--reload-url", metavar="URL", help="POST each update here (full weights)")
    how.add_argument("--reload-command", metavar="CMD", help="run this command per update (full weights)")
    sync.add_argument("--endpoint", metavar="URL",
                      help="base URL whose calls carry the new version (default: --lora-url; else every endpoint)")
    sync.add_argument("--policy", default="default", help="the policy to serve")
    sync.set_defaults(handler=_cmd_policy_sync)


async def _cmd_rollouts(args: argparse.Namespace, settings: Settings) -> int:
    settings = apply_model_flags(settings, args)
    config = submitted_config(settings)  # travels with each run: any worker runs these settings
    try:
        options = DriverOptions(samples=args.samples, max_in_flight=args.max_in_flight, run_prefix=args.prefix,
                                policy=args.policy, workflow=args.workflow, config=config)
    except ValueError as exc:
        raise EngineError(f"apollo rollouts: {exc}") from None
    problems = load_problems(args.dataset, limit=args.limit).problems
    engine_url = settings.nats.url or running_engine_url(settings)
    engine_running = engine_url is not None
    print(announce("rollouts", config["models"]["policy"], engine_url), file=sys.stderr, flush=True)
    if not args.no_probe:
        await probe_run_endpoints(config, args.workflow, settings, nothing="nothing was submitted")
    runtime = await open_runtime(settings, start_server=True)
    try:
        driver = RolloutDriver(runtime.log, options)
        progress = RolloutProgress(driver, len(problems))
        async with local_workers(runtime, enabled=not engine_running), _drawing(progress):
            await driver.submit(problems)
            await driver.drain()
    finally:
        await runtime.close()
    summary = {"groups": driver.stats.groups_submitted, "runs": driver.stats.groups_submitted * args.samples,
               "runs_failed": driver.stats.runs_failed, "max_open_groups": driver.stats.max_open_groups,
               "versions": list(dict.fromkeys(g.version for g in driver.groups))}
    if args.json:
        print(json.dumps(summary))
    else:
        versions = ", ".join("none" if v is None else f"v{v}" for v in summary["versions"])
        groups, runs = summary["groups"], summary["runs"]
        print(f"apollo rollouts: {groups} group{'' if groups == 1 else 's'} ({runs} run{'' if runs == 1 else 's'}, "
              f"{summary['runs_failed']} failed) for policy version {versions}; "
              f"at most {summary['max_open_groups']} open at once")
    return 0


@contextlib.asynccontextmanager
async def _drawing(progress: RolloutProgress, every: float = 1.0) -> AsyncIterator[None]:
    """Redraw the progress line while the block runs, and once more when it ends."""
    async def redraw() -> None:
        while True:
            progress.draw()
            await asyncio.sleep(every)

    task = asyncio.create_task(redraw())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        progress.draw(final=True)


async def _cmd_policy_sync(args: argparse.Namespace, settings: Settings) -> int:
    loader = _loader(args)
    endpoint = args.endpoint or args.lora_url
    runtime = await open_runtime(settings, start_server=False)
    sync = PolicySync(runtime.log, loader, endpoint=endpoint, policy=args.policy)
    install_signal_handlers(sync.stop)
    print(f"apollo policy-sync: serving policy {args.policy!r} updates through {loader.method}; Ctrl-C to stop",
          file=sys.stderr, flush=True)
    try:
        await sync.run()
    finally:
        await runtime.close()
    return 0


def _loader(args: argparse.Namespace) -> WeightLoader:
    if args.lora_url:
        return VllmLoraLoader(args.lora_url)
    if args.reload_url:
        return HttpReloadHook(args.reload_url)
    try:
        argv = shlex.split(args.reload_command)
    except ValueError as exc:
        raise EngineError(f"apollo policy-sync: --reload-command cannot be split into words: {exc}") from None
    if not argv:
        raise EngineError("apollo policy-sync: --reload-command is empty")
    return CommandReloadHook(argv)
