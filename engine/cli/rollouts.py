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
from engine.cli.left_running import say_left_unfinished
from engine.cli.problem_args import add_model_arguments, apply_model_flags
from engine.cli.progress import RolloutProgress
from engine.cli.run_lookup import open_run_index
from engine.cli.submitted_settings import announce, submitted_config
from engine.cli.taken_run_ids import differences, recorded_submission, taken
from engine.config.settings import Settings
from engine.console.argtypes import whole_number
from engine.datasets import Problem, load_problems
from engine.errors import EngineError
from engine.eventlog.port import EventLog
from engine.rollouts import DriverOptions, RolloutDriver
from engine.runtime.signals import install_signal_handlers
from engine.serving import CommandReloadHook, HttpReloadHook, PolicySync, VllmLoraLoader, WeightLoader
from events.evolve import RoundCompleted
from events.record import Recorded
from events.run import RUN_ENDINGS, ProblemSubmitted, RunCompleted
from handlers.workflows import DEFAULT_WORKFLOW, WORKFLOW_NAMES
from replay.dataset_scores import INCOMPLETE_REASONS
from replay.run_ending import done_reason_read, round_incomplete

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
        seen = EndingsSeen(runtime.log)
        driver = RolloutDriver(seen, options)  # type: ignore[arg-type]  # the log, read through
        recorded_before = await _recorded_before(runtime, settings, driver, problems, await driver.current_version())
        if recorded_before:
            print(f"apollo rollouts: {recorded_before} of {len(problems) * args.samples} runs were submitted before "
                  f"under --prefix {args.prefix} with these problems and settings: they are not submitted again "
                  "(their recorded results count)", file=sys.stderr, flush=True)
        progress = RolloutProgress(driver, len(problems), not_completed=lambda: len(seen.not_completed))
        async with local_workers(runtime, enabled=not engine_running), _drawing(progress):
            try:
                await driver.submit(problems)
                await driver.drain()
            except asyncio.CancelledError:  # Ctrl-C: the runs submitted are not stopped by that
                if driver.open_run_ids():
                    say_left_unfinished("rollouts", driver.open_run_ids(), engine_running=engine_running)
                raise
    finally:
        await runtime.close()
    failed = driver.stats.runs_failed + len(seen.not_completed)
    summary = {"groups": driver.stats.groups_submitted, "runs": driver.stats.groups_submitted * args.samples,
               "runs_failed": failed, "max_open_groups": driver.stats.max_open_groups,
               "versions": list(dict.fromkeys(g.version for g in driver.groups)), "recorded_before": recorded_before}
    if args.json:
        print(json.dumps(summary))
    else:
        versions = ", ".join("none" if v is None else f"v{v}" for v in summary["versions"])
        groups, runs = summary["groups"], summary["runs"]
        before = f", {recorded_before} of them recorded before" if recorded_before else ""
        print(f"apollo rollouts: {groups} group{'' if groups == 1 else 's'} ({runs} run{'' if runs == 1 else 's'}"
              f"{before}, {summary['runs_failed']} failed) for policy version {versions}; "
              f"at most {summary['max_open_groups']} open at once")
    if failed:
        print(f"apollo rollouts: {failed} of {summary['runs']} runs failed (a model server or the engine did) or were "
              "cancelled: `apollo runs` lists them, `apollo show RUN` says why", file=sys.stderr)
    return 1 if failed else 0


class EndingsSeen:
    """The event log as the rollout driver reads it, noting the runs that ended ``run.completed`` without
    the model's answer judged (its model server failed: `apollo runs` lists them as failed, with no score),
    an evolve run none of whose rounds judged the model included.

    The driver counts as failed only runs that did not complete; this command counts these too. The driver
    reads each open run from its start in pieces (what it recorded since the last look), so the rounds are
    counted as the pieces pass, and the ending is read as `apollo runs` reads it
    (:func:`replay.run_ending.done_reason_read`) without reading any run again.
    """

    def __init__(self, log: EventLog) -> None:
        self._log = log
        self.not_completed: set[str] = set()
        self._rounds: dict[str, list[int]] = {}
        """Run id -> [rounds ended, rounds ended without the model's answer judged], until its ending."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._log, name)

    async def read_run(self, run_id: str, *args: Any, **kwargs: Any) -> list[Recorded]:
        records = await self._log.read_run(run_id, *args, **kwargs)
        rounds = self._rounds.setdefault(run_id, [0, 0])
        for record in records:
            event = record.event
            if isinstance(event, RoundCompleted):
                rounds[0] += 1
                rounds[1] += round_incomplete(event.done_reason)
            elif isinstance(event, RUN_ENDINGS):
                if isinstance(event, RunCompleted) and done_reason_read(event, *rounds) in INCOMPLETE_REASONS:
                    self.not_completed.add(run_id)
                self._rounds.pop(run_id, None)
                break
        return records


async def _recorded_before(runtime: Any, settings: Settings, driver: RolloutDriver, problems: list[Problem],
                           version: int | None) -> int:
    """How many of the runs the driver will submit are recorded already with the same submission.

    The driver's run ids follow its prefix and the problems' order, and a submission under a
    recorded id is a no-op: a run recorded with another problem, settings or policy version
    would be counted as this command's. Such a one is refused before anything is submitted.
    """
    planned = [event for ordinal, problem in enumerate(problems)
               for event in driver.group_submissions(problem, ordinal, version)]
    index = await open_run_index(runtime.log, settings)
    try:
        held = [event for event in planned if index.pick(event.run_id, 1)[0] == [event.run_id]]
    finally:
        index.close()
    for new in held:
        recorded = await recorded_submission(runtime.log, new.run_id)
        found = differences(recorded, new, metadata=("policy_version",)) if isinstance(recorded, ProblemSubmitted) \
            else ["no readable submission"]
        if found:
            more = f" ({len(held)} of its runs are recorded)" if len(held) > 1 else ""
            raise EngineError(taken(new.run_id, found, flag=f"--prefix{more}", nothing="nothing was submitted"))
    return len(held)


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
