"""``apollo sandbox ...``: run a snippet through the sandbox; report its protections."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from typing import Any

from engine.sandbox.config import ESSENTIAL, SandboxConfig
from engine.sandbox.errors import SandboxError
from engine.sandbox.protections import protection_report
from engine.sandbox.sandbox import PythonSandbox
from engine.tools.python_code import PythonCodeTool
from handlers.ports import ToolError, ToolOptions
from handlers.run_settings import EpisodeSpec


def register(subparsers: Any) -> None:
    """Add ``sandbox run FILE | -c CODE [--timeout S]`` and ``sandbox protections``."""
    parser = subparsers.add_parser("sandbox", help="run Python in the sandbox, check it")
    commands = parser.add_subparsers(dest="sandbox_command", required=True)
    run = commands.add_parser("run", help="run a file (or -c CODE) and print the tool's JSON")
    run.add_argument("file", nargs="?", help="Python file to run ('-' for stdin)")
    run.add_argument("-c", dest="code", help="code to run instead of a file")
    run.add_argument("--timeout", type=float, default=None, help="seconds (default 30)")
    run.add_argument(
        "--allow-degraded", action="store_true", help="run even if some protections are unavailable"
    )
    run.set_defaults(handler=lambda args: _run(args, run))
    check = commands.add_parser("protections", help="list the protections this machine gives")
    check.set_defaults(handler=lambda args: _protections())


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if (args.file is None) == (args.code is None):
        parser.error("give exactly one of FILE or -c CODE")
    if args.timeout is not None and not args.timeout > 0:
        parser.error("--timeout must be positive")
    if args.code is not None:
        code = args.code
    elif args.file == "-":
        code = sys.stdin.read()
    else:
        try:
            with open(args.file, encoding="utf-8", errors="surrogateescape") as f:
                code = f.read()
        except OSError as exc:
            print(f"error: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
            return 1
    config = SandboxConfig(allow_degraded=args.allow_degraded)
    episode = EpisodeSpec() if args.timeout is None else EpisodeSpec(python_code_timeout=args.timeout)
    try:
        result = asyncio.run(_run_once(config, code, ToolOptions(episode=episode)))
    except (SandboxError, ToolError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(result.text)
    return 0 if result.score == 1 else 1


async def _run_once(config: SandboxConfig, code: str, options: ToolOptions) -> Any:
    async with PythonSandbox(dataclasses.replace(config, spares=0)) as sandbox:
        return await PythonCodeTool(sandbox).run(code, options)


def _protections() -> int:
    rows = protection_report()
    for name, ok, detail in rows:
        print(f"{'ok ' if ok else 'NO '} {name:<20} {detail}")
    return 0 if all(ok for name, ok, _ in rows if name in ESSENTIAL) else 1


def main(argv: list[str] | None = None) -> int:
    """``python -m engine.cli.sandbox run ...``: the same commands as ``apollo sandbox``."""
    parser = argparse.ArgumentParser(prog="apollo")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["sandbox", *(sys.argv[1:] if argv is None else argv)])
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
