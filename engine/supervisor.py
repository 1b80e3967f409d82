"""`apollo up`: the embedded server (when no URL is configured) and the worker processes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys

import structlog

from engine.bootstrap import open_runtime
from engine.config import Settings

log = structlog.get_logger("apollo.up")


async def serve(settings: Settings, *, workers: int, concurrency: int | None) -> int:
    """Run until Ctrl-C/SIGTERM: one in-process worker plus ``workers - 1`` children."""
    from engine.cli import install_signal_handlers

    runtime = await open_runtime(settings, start_server=True)
    url = runtime.server.url if runtime.server else settings.nats.url
    children = [_spawn_worker(url, concurrency) for _ in range(max(0, workers - 1))]
    dispatcher = runtime.dispatcher(concurrency)
    install_signal_handlers(dispatcher.stop)
    where = f"embedded nats-server at {url}" if runtime.owns_server else f"NATS at {url}"
    print(f"apollo up: {workers} worker(s) on {where}; Ctrl-C to stop", file=sys.stderr, flush=True)
    _report_protections(runtime)
    try:
        await dispatcher.run()
    finally:
        for child in children:
            child.terminate()
        for child in children:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(10)
        await runtime.close()
    print("apollo up: stopped", file=sys.stderr)
    return 0


async def serve_worker(settings: Settings, *, concurrency: int | None) -> int:
    """One worker process connected to an existing server (started by `apollo up`)."""
    from engine.cli import install_signal_handlers

    runtime = await open_runtime(settings, start_server=False)
    dispatcher = runtime.dispatcher(concurrency)
    install_signal_handlers(dispatcher.stop)
    try:
        await dispatcher.run()
    finally:
        await runtime.close()
    return 0


def _spawn_worker(url: str | None, concurrency: int | None) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-m", "engine"]
    if url:
        args += ["--nats-url", url]
    args.append("worker")
    if concurrency:
        args += ["--concurrency", str(concurrency)]
    return subprocess.Popen(args, env=os.environ.copy())  # noqa: S603 - our own module


def _report_protections(runtime: object) -> None:
    """Say which sandbox protections are active (never run unprotected silently)."""
    with contextlib.suppress(Exception):
        from engine.sandbox.cli import protection_report

        active = [name for name, ok, _ in protection_report() if ok]
        missing = [name for name, ok, _ in protection_report() if not ok]
        log.info("sandbox_protections", active=active, missing=missing)


