"""`apollo` command line: parses arguments, builds settings, calls engine.commands.

Exit codes: 0 ok, 1 failure, 2 usage error; failures print one clear line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import msgspec

from engine.config import Settings, load_settings
from engine.errors import EngineError
from engine.logging import configure_logging


def package_version() -> str:
    try:
        return version("apollo-engine")
    except PackageNotFoundError:
        return "0+unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="apollo",
        description="An event-sourced engine for agentic math reasoning on NATS JetStream.",
    )
    parser.add_argument("--version", action="version", version=f"apollo {package_version()}")
    parser.add_argument("--config", help="YAML or TOML settings file (reference configs accepted)")
    parser.add_argument("--nats-url", help="NATS server URL (default: APOLLO_NATS_URL or the embedded server)")
    parser.add_argument("--log-json", action="store_true", help="log JSON lines instead of console output")
    parser.add_argument("--log-level", default=None, help="debug, info, warning, error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    up = sub.add_parser("up", help="start the engine's workers (and an embedded nats-server) in the foreground")
    up.add_argument("--workers", type=_positive_int, default=None, help="worker processes (default 1)")
    up.add_argument("--concurrency", type=_positive_int, default=None, help="events in flight per worker")
    up.set_defaults(handler=_cmd_up)

    worker = sub.add_parser("worker", help=argparse.SUPPRESS)
    worker.add_argument("--concurrency", type=_positive_int, default=None)
    worker.set_defaults(handler=_cmd_worker)

    submit = sub.add_parser("submit", help="submit one problem to a running engine; prints the run id")
    _problem_arguments(submit)
    submit.set_defaults(handler=_cmd_submit)

    solve = sub.add_parser("solve", help="solve one problem end to end and print the graded answer")
    _problem_arguments(solve)
    solve.add_argument("--model", help="policy model name (or scripted:FILE)")
    solve.add_argument("--model-url", help="OpenAI-compatible base URL of the policy model")
    solve.add_argument("--json", action="store_true", help="print one JSON object")
    solve.add_argument("--timeout", type=float, default=None, help="give up after this many seconds")
    solve.set_defaults(handler=_cmd_solve)

    runs = sub.add_parser("runs", help="list recorded runs")
    runs.add_argument("--json", action="store_true")
    runs.set_defaults(handler=_cmd_runs)

    show = sub.add_parser("show", help="a run's timeline")
    show.add_argument("run_id")
    show.add_argument("--json", action="store_true", help="print the run's events as JSON lines")
    show.add_argument("--html", metavar="FILE", help="write an offline HTML timeline")
    show.set_defaults(handler=_cmd_show)

    schema = sub.add_parser("schema", help="JSON Schema of every event")
    schema.set_defaults(handler=_cmd_schema)

    for register in _extension_registrars():
        register(sub)
    return parser


def _problem_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("question", help="the problem text")
    parser.add_argument("--answer", help="ground truth, used only for grading")
    parser.add_argument("--run-id", help="run id to use (default: generated)")
    parser.add_argument("--workflow", default="reason", choices=["reason", "evolve"])
    parser.add_argument("--max-steps", type=_positive_int, help="step budget of the episode")


def _extension_registrars() -> list[Callable[[Any], None]]:
    """Subcommands owned by other engine modules (each adds its own parser)."""
    from engine import extra_commands

    return extra_commands.registrars()


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        msg = f"expected a positive integer, got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if value < 1:
        msg = f"expected a positive integer, got {value}"
        raise argparse.ArgumentTypeError(msg)
    return value


def settings_from_args(args: argparse.Namespace, **overrides: Any) -> Settings:
    extra: dict[str, Any] = {}
    if getattr(args, "nats_url", None):
        extra["nats"] = {"url": args.nats_url}
    if args.log_json or args.log_level:
        extra["log"] = {k: v for k, v in (("json", args.log_json or None), ("level", args.log_level)) if v}
    for key, value in overrides.items():
        extra.setdefault(key, {}).update(value)
    return load_settings(args.config, overrides=extra)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = settings_from_args(args)
        configure_logging(json=settings.log.json, level=settings.log.level)
        result = args.handler(args, settings)
        if asyncio.iscoroutine(result):
            result = asyncio.run(result)
        return int(result or 0)
    except EngineError as exc:
        print(f"apollo: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("apollo: interrupted", file=sys.stderr)
        return 130
    except (ValueError, TimeoutError, OSError) as exc:
        print(f"apollo: error: {exc}", file=sys.stderr)
        return 1


# -- commands -----------------------------------------------------------------------


async def _cmd_up(args: argparse.Namespace, settings: Settings) -> int:
    from engine.supervisor import serve

    return await serve(settings, workers=args.workers or settings.worker.workers, concurrency=args.concurrency)


async def _cmd_worker(args: argparse.Namespace, settings: Settings) -> int:
    from engine.supervisor import serve_worker

    return await serve_worker(settings, concurrency=args.concurrency)


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if getattr(args, "max_steps", None):
        config["episode"] = {"max_steps": args.max_steps}
    return config


async def _cmd_submit(args: argparse.Namespace, settings: Settings) -> int:
    from engine.bootstrap import open_runtime
    from engine.commands import new_run_id, submission

    runtime = await open_runtime(settings, start_server=False)
    try:
        run_id = args.run_id or new_run_id()
        event = submission(run_id, args.question, ground_truth=args.answer,
                           workflow=args.workflow, config=_overrides(args))
        await runtime.log.append(event)
    finally:
        await runtime.close()
    print(run_id)
    return 0


async def _cmd_solve(args: argparse.Namespace, settings: Settings) -> int:
    from engine.solve import solve

    if args.model or args.model_url:
        policy: dict[str, Any] = {}
        if args.model:
            policy["model"] = args.model
        if args.model_url:
            policy["base_url"] = args.model_url
        raw_models = {role: msgspec.to_builtins(spec) for role, spec in settings.models.items()}
        raw_models["policy"] = {**raw_models.get("policy", {}), **policy}
        if "model" not in raw_models["policy"] and args.model_url:
            raw_models["policy"]["model"] = "default"
        settings = msgspec.structs.replace(
            settings, models=msgspec.convert(raw_models, dict[str, type(settings.model_for("policy"))])
        )
    return await solve(settings, args, _overrides(args))


async def _cmd_runs(args: argparse.Namespace, settings: Settings) -> int:
    from engine.inspect import list_runs

    return await list_runs(settings, as_json=args.json)


async def _cmd_show(args: argparse.Namespace, settings: Settings) -> int:
    from engine.inspect import show_run

    return await show_run(settings, args.run_id, as_json=args.json, html=args.html)


def _cmd_schema(args: argparse.Namespace, settings: Settings) -> int:
    from events.catalog import any_event_type

    schema = msgspec.json.schema(any_event_type())
    print(json.dumps(schema, indent=2))
    return 0


def install_signal_handlers(stop: Callable[[], None]) -> None:
    """Ctrl-C / SIGTERM stop the engine cleanly."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)


if __name__ == "__main__":
    sys.exit(main())
