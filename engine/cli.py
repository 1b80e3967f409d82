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

from engine.argtypes import whole_number
from engine.config import Settings, load_settings
from engine.errors import EngineError
from engine.logging import configure_logging
from engine.run_filters import add_run_filter_arguments, run_filter


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
    parser.add_argument("--log-level", default=None, type=_log_level, help="debug, info, warning or error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    up = sub.add_parser("up", help="start the engine's workers (and an embedded nats-server) in the foreground")
    up.add_argument("--workers", type=_positive_int, default=None, help="worker processes (default 1)")
    up.add_argument("--concurrency", type=_positive_int, default=None, help="events in flight per worker")
    up.add_argument("--metrics-port", type=_port, default=None,
                    help="serve Prometheus metrics on this port (children use the next ones)")
    up.set_defaults(handler=_cmd_up)

    worker = sub.add_parser("worker", help="one worker process joining a running engine (any host)")
    worker.add_argument("--concurrency", type=_positive_int, default=None)
    worker.add_argument("--metrics-port", type=_port, default=None)
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

    runs = sub.add_parser("runs", help="list recorded runs, newest first")
    runs.add_argument("--json", action="store_true", help="print the rows as one JSON list")
    add_run_filter_arguments(runs)
    runs.add_argument("--status", choices=["completed", "failed", "running", "unreadable"])
    runs.add_argument("--limit", type=_positive_int, help="only the newest N runs that match")
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
    _accept_config_after_command(sub)
    return parser


def _accept_config_after_command(sub: Any) -> None:
    """Global flags work after the subcommand too: ``apollo run --config F`` is
    ``apollo --config F run`` (a command's own flag of the same name wins)."""
    global_flags: list[tuple[str, dict[str, Any]]] = [
        ("--config", {"help": "settings file (as the global --config)"}),
        ("--nats-url", {"help": "NATS server URL (as the global --nats-url)"}),
        ("--log-json", {"action": "store_true", "help": "log JSON lines (as the global --log-json)"}),
        ("--log-level", {"type": _log_level, "help": "debug, info, warning or error (as the global --log-level)"}),
    ]
    for command in sub.choices.values():
        taken = {flag for action in command._actions for flag in action.option_strings}  # noqa: SLF001
        for flag, options in global_flags:
            if flag not in taken:
                command.add_argument(flag, default=argparse.SUPPRESS, **options)


def _problem_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("question", nargs="?", help="the problem text (or use --from-dataset)")
    parser.add_argument("--from-dataset", metavar="FILE", help="take the question and answer from a dataset file")
    parser.add_argument("--index", type=int, default=0, help="row of --from-dataset to use (default 0)")
    parser.add_argument("--answer", help="ground truth, used only for grading")
    parser.add_argument("--run-id", help="run id to use (default: generated)")
    parser.add_argument("--workflow", default="reason", choices=["reason", "evolve"])
    parser.add_argument("--max-steps", type=_positive_int, help="step budget of the episode")


def _extension_registrars() -> list[Callable[[Any], None]]:
    """Subcommands owned by other engine modules (each adds its own parser)."""
    from engine import extra_commands

    return extra_commands.registrars()


_positive_int = whole_number(1)
_port = whole_number(1, 65535)
LOG_LEVELS = ("debug", "info", "warning", "error")


def _log_level(text: str) -> str:
    """A log level name, in any case; anything else is a usage error naming the choices."""
    if text.lower() not in LOG_LEVELS:
        msg = f"unknown log level {text!r}: use one of {', '.join(LOG_LEVELS)}"
        raise argparse.ArgumentTypeError(msg)
    return text.lower()


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
    if hasattr(args, "from_dataset") and not (args.question or args.from_dataset):
        parser.error(f"{args.command}: give a QUESTION or --from-dataset FILE")
    try:
        _fill_from_dataset(args)
        settings = settings_from_args(args)
        configure_logging(json=settings.log.json, level=settings.log.level)
        _end_like_ctrl_c()
        result = _call_handler(args.handler, args, settings)
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


def _call_handler(handler: Callable[..., Any], args: argparse.Namespace, settings: Settings) -> Any:
    """Handlers take ``(args, settings)``; self-contained ones take only ``args``."""
    import inspect

    if len(inspect.signature(handler).parameters) >= 2:
        return handler(args, settings)
    return handler(args)


def _fill_from_dataset(args: argparse.Namespace) -> None:
    """``--from-dataset FILE --index N``: question, ground truth and source from a benchmark row."""
    if not getattr(args, "from_dataset", None):
        return
    from engine.datasets import DatasetError, load_problems

    try:
        load = load_problems(args.from_dataset, limit=args.index + 1 if args.index >= 0 else None)
    except DatasetError as exc:
        raise EngineError(str(exc)) from exc
    if not 0 <= args.index < len(load.problems):
        msg = f"--index {args.index} is out of range: {args.from_dataset} has {len(load.problems)} usable rows"
        raise EngineError(msg)
    problem = load.problems[args.index]
    args.question = args.question or problem.question
    args.answer = args.answer if args.answer is not None else problem.ground_truth
    args.problem_id = problem.problem_id
    args.data_source = problem.data_source


# -- commands -----------------------------------------------------------------------


async def _cmd_up(args: argparse.Namespace, settings: Settings) -> int:
    from engine.supervisor import serve

    workers = args.workers or settings.worker.workers
    if args.metrics_port is not None and args.metrics_port + workers - 1 > 65535:
        msg = (f"--metrics-port {args.metrics_port} with {workers} workers needs ports up to "
               f"{args.metrics_port + workers - 1}; the last is 65535")
        raise EngineError(msg)
    return await serve(settings, workers=workers, concurrency=args.concurrency, metrics_port=args.metrics_port)


async def _cmd_worker(args: argparse.Namespace, settings: Settings) -> int:
    from engine.supervisor import serve_worker

    return await serve_worker(settings, concurrency=args.concurrency, metrics_port=args.metrics_port)


def problem_fields(args: argparse.Namespace) -> dict[str, Any]:
    """Problem id and data source when the question came from a dataset."""
    fields = {}
    if getattr(args, "problem_id", None):
        fields["problem_id"] = args.problem_id
    if getattr(args, "data_source", None):
        fields["data_source"] = args.data_source
    return fields


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if getattr(args, "max_steps", None):
        config["episode"] = {"max_steps": args.max_steps}
    return config


async def _cmd_submit(args: argparse.Namespace, settings: Settings) -> int:
    from engine.bootstrap import open_runtime
    from engine.commands import new_run_id, submission, submit

    runtime = await open_runtime(settings, start_server=False)
    try:
        run_id = args.run_id or new_run_id()
        event = submission(run_id, args.question, ground_truth=args.answer, workflow=args.workflow,
                           config=_overrides(args), **problem_fields(args))
        await submit(runtime.log, event)
    finally:
        await runtime.close()
    print(run_id)
    return 0


async def _cmd_solve(args: argparse.Namespace, settings: Settings) -> int:
    from engine.solve import solve

    return await solve(apply_model_flags(settings, args), args, _overrides(args))


def apply_model_flags(settings: Settings, args: argparse.Namespace) -> Settings:
    """``--model`` / ``--model-url`` replace the policy model's name and endpoint."""
    model = getattr(args, "model", None)
    url = getattr(args, "model_url", None)
    if not (model or url):
        return settings
    policy = msgspec.to_builtins(settings.model_for("policy"))
    if url:
        policy["base_url"] = url
        if not model and policy["model"].startswith("scripted:"):
            policy["model"] = "default"
    if model:
        policy["model"] = model
    models = {role: msgspec.to_builtins(spec) for role, spec in settings.models.items()}
    models["policy"] = policy
    raw = msgspec.to_builtins(settings)
    raw["models"] = models
    from engine.config import validate

    return validate(raw)


async def _cmd_runs(args: argparse.Namespace, settings: Settings) -> int:
    from engine.inspect import list_runs

    return await list_runs(settings, run_filter(args), limit=args.limit, as_json=args.json)


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
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # a closed terminal stops it too
        loop.add_signal_handler(sig, stop)


def _end_like_ctrl_c() -> None:
    """SIGTERM and SIGHUP (a closed terminal) end a command as Ctrl-C does, so its clean-up
    runs: the embedded server stops and the grading pool shuts down (no leaked semaphores).
    `apollo up` and `apollo worker` replace these with a graceful stop."""
    def as_interrupt(_signum: int, frame: Any) -> None:
        on_ctrl_c = signal.getsignal(signal.SIGINT)  # asyncio's: cancel the main task
        if callable(on_ctrl_c):
            on_ctrl_c(signal.SIGINT, frame)
        else:  # Ctrl-C ignored (started in the background): end all the same
            raise KeyboardInterrupt

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, as_interrupt)


if __name__ == "__main__":
    sys.exit(main())
