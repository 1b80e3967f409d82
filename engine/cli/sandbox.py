"""``apollo sandbox ...``: run a snippet through the sandbox; report its protections."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from typing import Any

from engine.sandbox.config import ESSENTIAL, SandboxConfig
from engine.sandbox.errors import SandboxError
from engine.sandbox.sandbox import PythonSandbox
from engine.tools.python_code import PythonCodeTool
from handlers.ports import ToolError

_DESCRIPTIONS = {
    "pid_namespace": "own PID namespace: processes die with the call, others are invisible",
    "network_namespace": "own network namespace: no network, not even the host's loopback",
    "mount_namespace": "own mount namespace",
    "ipc_uts_namespace": "own IPC and hostname namespaces",
    "filesystem_view": "fresh read-only root with only Python's files; /tmp scratch",
    "unprivileged_user": "runs as a per-call unprivileged uid",
    "no_new_privs": "no privilege gain through exec (setuid binaries)",
    "landlock": "Landlock: writes only to scratch, no TCP, no signals outside",
    "seccomp": "seccomp: no kernel keyrings (they would outlive the call)",
    "memory_cgroup": "one memory limit for the whole call (processes, SysV shm, memfds, files)",
    "ipc_limits": "SysV shared memory and message queues capped in the call's IPC namespace",
    "empty_environment": "empty environment (no inherited secrets)",
    "rlimits": "CPU, memory, file size, open files and process limits",
}


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
    settings = {} if args.timeout is None else {"python_code_timeout": args.timeout}
    try:
        result = asyncio.run(_run_once(config, code, settings))
    except (SandboxError, ToolError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(result.text)
    return 0 if result.score == 1 else 1


async def _run_once(config: SandboxConfig, code: str, settings: dict[str, Any]) -> Any:
    async with PythonSandbox(dataclasses.replace(config, spares=0)) as sandbox:
        return await PythonCodeTool(sandbox).run(code, settings)


def _protections() -> int:
    rows = protection_report()
    for name, ok, detail in rows:
        print(f"{'ok ' if ok else 'NO '} {name:<20} {detail}")
    return 0 if all(ok for name, ok, _ in rows if name in ESSENTIAL) else 1


def protection_report() -> list[tuple[str, bool, str]]:
    """``(protection, available, detail)`` for every protection, probed by a real worker."""
    config = SandboxConfig(allow_degraded=True, spares=0, max_concurrency=1)
    try:
        applied = asyncio.run(_probe(config))
    except SandboxError as exc:
        return [("sandbox", False, str(exc))]
    rows = []
    for name, description in _DESCRIPTIONS.items():
        value = applied.get(name, "not reported")
        ok = value is True
        rows.append((name, ok, description if ok else f"{value} ({description})"))
    return rows


async def _probe(config: SandboxConfig) -> dict[str, Any]:
    async with PythonSandbox(config) as sandbox:
        return sandbox.protections()


def main(argv: list[str] | None = None) -> int:
    """``python -m engine.cli.sandbox run ...``: the same commands as ``apollo sandbox``."""
    parser = argparse.ArgumentParser(prog="apollo")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["sandbox", *(sys.argv[1:] if argv is None else argv)])
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
