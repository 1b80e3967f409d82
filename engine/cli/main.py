"""`apollo` command line: global flags, the one list of command modules, settings, exit codes.

Every command lives in a module of this package with a ``register(subparsers)`` function
that adds its parser and sets ``handler``; :data:`COMMAND_MODULES` lists them in help order.
Exit codes: 0 ok, 1 failure, 2 usage error; failures print one clear line.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Any

from engine.app.log_setup import configure_logging
from engine.cli import (
    cancel,
    dataset_run,
    doctor,
    export,
    model_serve,
    plugins,
    rag,
    regrade,
    replay,
    report,
    rollouts,
    runs,
    sandbox,
    schema,
    serve,
    solve,
    train,
)
from engine.cli.closed_output import discard_output, flush_output, reader_gone
from engine.cli.problem_args import fill_from_dataset
from engine.cli.usage_errors import command_parser, parse
from engine.config.settings import Settings, load_settings
from engine.errors import EngineError
from engine.runtime.signals import end_like_ctrl_c, run_command

COMMAND_MODULES: tuple[ModuleType, ...] = (
    serve, solve, runs, cancel, schema, sandbox, rag, export, dataset_run, rollouts, doctor, replay, regrade, report,
    plugins, train, model_serve,
)
"""Where every `apollo` command is defined; to add one, write a module with ``register`` and list it."""

LOG_LEVELS = ("debug", "info", "warning", "error")


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
    for module in COMMAND_MODULES:
        module.register(sub)
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
    commands = list(sub.choices.values())
    while commands:
        command = commands.pop()
        taken = {flag for action in command._actions for flag in action.option_strings}
        for flag, options in global_flags:
            if flag not in taken:
                command.add_argument(flag, default=argparse.SUPPRESS, **options)
        for action in command._actions:  # and after an action's name: ``apollo streams ensure --nats-url U``
            if isinstance(action, argparse._SubParsersAction):
                commands.extend(action.choices.values())


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
    args = parse(parser, argv)
    if hasattr(args, "from_dataset") and not (args.question or args.from_dataset):
        command_parser(parser, args.command).error("give a QUESTION or --from-dataset FILE")
    if getattr(args, "from_dataset", None) and args.question:
        command_parser(parser, args.command).error(
            "give a QUESTION or --from-dataset FILE, not both (--from-dataset takes the question of row --index, "
            "and its ground truth)")
    try:
        fill_from_dataset(args)
        settings = settings_from_args(args)
        configure_logging(json=settings.log.json, level=settings.log.level)
        end_like_ctrl_c()
        result = _call_handler(args.handler, args, settings)
        if asyncio.iscoroutine(result):
            result = run_command(result)
        flush_output()
        return int(result or 0)
    except BrokenPipeError as exc:
        if not reader_gone():
            print(f"apollo: error: {exc}", file=sys.stderr)
            return 1
        discard_output()
        return 0
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
    if len(inspect.signature(handler).parameters) >= 2:
        return handler(args, settings)
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
