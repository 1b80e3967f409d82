"""`apollo up`: the embedded server (when no URL is configured) and the worker processes."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import structlog

from engine.app.bootstrap import open_runtime, running_engine_url
from engine.config.settings import Settings, default_data_dir
from engine.nats.streams import delivered_subjects
from engine.runtime.processes import freeze_startup_heap
from engine.runtime.projector import run_projector
from engine.runtime.run_activity import RunActivity
from engine.runtime.run_index import follow_run_index
from engine.runtime.signals import install_signal_handlers
from engine.runtime.worker_metrics import exposed, refuse_taken_port
from engine.sandbox.protections import protection_report
from engine.serving.watch import watching_activations

log = structlog.get_logger("apollo.up")


async def serve(
    settings: Settings, *, workers: int, concurrency: int | None, metrics_port: int | None = None
) -> int:
    """Run until Ctrl-C/SIGTERM: one in-process worker plus ``workers - 1`` children.

    Children get this process's full settings (config file, flags and environment as
    resolved here) and, with ``metrics_port``, the ports after it. Those ports are checked
    before anything starts, and a child that exits while this one serves is said, with the
    workers left.
    """
    if metrics_port is not None:  # taken ports refused before `up` says it runs (a child would die)
        for index in range(workers):
            refuse_taken_port(metrics_port + index, whose="" if index == 0 else
                              f" (worker {index + 1} of {workers}: --metrics-port P gives them P, P+1, ...)")
    runtime = await open_runtime(settings, start_server=True, manage_streams=True)
    url = runtime.server.url if runtime.server else settings.nats.url
    settings_file = _child_settings_file(settings) if workers > 1 else None
    children = [
        _spawn_worker(url, concurrency, settings_file, None if metrics_port is None else metrics_port + index)
        for index in range(1, workers)
    ]
    dispatcher = runtime.dispatcher(concurrency)
    install_signal_handlers(dispatcher.stop)
    freeze_startup_heap()
    where = f"embedded nats-server at {url}" if runtime.owns_server else f"NATS at {url}"
    print(f"apollo up: {workers} worker(s) on {where}; Ctrl-C to stop", file=sys.stderr, flush=True)
    await _report_protections()
    activity = RunActivity()  # one log line per run started / finished, and each model endpoint
    roles = dict.fromkeys(["policy", *settings.models])
    activity.endpoints_in({role: settings.model_for(role) for role in roles}, source="config")
    await activity.subscribe(runtime.log.nc)
    watch = asyncio.create_task(_watch_children(settings, children, workers))
    try:
        await _work(runtime, dispatcher, metrics_port, with_projector=True)
    finally:
        watch.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watch
        for child in children:
            child.terminate()
        for child in children:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(10)
        if settings_file is not None:
            settings_file.unlink(missing_ok=True)
        await runtime.close()
    print("apollo up: stopped", file=sys.stderr)
    return 0


async def _watch_children(settings: Settings, children: list[subprocess.Popen[bytes]], workers: int,
                          every: float = 1.0) -> None:
    """Say each worker child that exits while `apollo up` serves, and how many workers are left:
    the start-up line counted it."""
    gone: set[int] = set()
    while len(gone) < len(children):
        await asyncio.sleep(every)
        for child in children:
            code = child.poll()
            if code is not None and child.pid not in gone:
                gone.add(child.pid)
                how = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
                _say(settings, f"apollo up: worker process {child.pid} ended ({how}): {workers - len(gone)} of "
                     f"{workers} worker(s) left", "worker_exited", pid=child.pid, returncode=code,
                     left=workers - len(gone))


async def serve_worker(settings: Settings, *, concurrency: int | None, metrics_port: int | None = None) -> int:
    """One worker process connected to an existing server (any host, any number of them)."""
    if metrics_port is not None:
        refuse_taken_port(metrics_port)
    runtime = await open_runtime(settings, start_server=False, manage_streams=True)
    dispatcher = runtime.dispatcher(concurrency)
    install_signal_handlers(dispatcher.stop)
    freeze_startup_heap()
    # said, as `apollo up` says where it runs: a worker that joined silently looks like one that hangs
    url = settings.nats.url or running_engine_url(settings)
    _say(settings, f"apollo worker: joined the engine on NATS at {url}; Ctrl-C to stop", "worker_joined", nats_url=url)
    try:
        await _work(runtime, dispatcher, metrics_port, with_projector=False)
    finally:
        await runtime.close()
    _say(settings, "apollo worker: stopped", "worker_stopped")
    return 0


def _say(settings: Settings, line: str, event: str, **fields: Any) -> None:
    """A line for a person, or, when the log is JSON, the same news as one JSON log record (a
    collector reading the worker's output must find one JSON object per line)."""
    if settings.log.json:
        log.info(event, **fields)
    else:
        print(line, file=sys.stderr, flush=True)


async def _work(runtime: Any, dispatcher: Any, metrics_port: int | None, *, with_projector: bool) -> None:
    """Dispatch until stopped, with metrics; the supervising process also runs the projector
    (one projector per engine: worker children would only repeat its work)."""
    projector_stop = asyncio.Event()
    projector = (asyncio.create_task(run_projector(runtime.log, projector_stop, work_filter=delivered_subjects()))
                 if with_projector else None)
    run_index = (asyncio.create_task(follow_run_index(runtime.log, default_data_dir(runtime.settings), projector_stop))
                 if with_projector else None)
    try:
        async with (
            exposed(runtime.log, dispatcher.settings.consumer, metrics_port) as metrics,
            watching_activations(runtime.log),  # model calls carry the served policy version
        ):
            dispatcher.observer = metrics
            await dispatcher.run()
    finally:
        projector_stop.set()
        for task in (projector, run_index):
            if task is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(task, 10)


def _child_settings_file(settings: Settings) -> Path:
    """The resolved settings as a private JSON file (JSON is YAML, so ``--config`` reads it)."""
    folder = default_data_dir(settings) / "workers"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"settings-{os.getpid()}.json"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # holds API keys
    with os.fdopen(fd, "wb") as handle:
        handle.write(msgspec.json.encode(settings))
    return path


def _spawn_worker(
    url: str | None, concurrency: int | None, settings_file: Path | None, metrics_port: int | None
) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-m", "engine"]
    if settings_file is not None:
        args += ["--config", str(settings_file)]
    if url:
        args += ["--nats-url", url]
    args.append("worker")
    if concurrency:
        args += ["--concurrency", str(concurrency)]
    if metrics_port is not None:
        args += ["--metrics-port", str(metrics_port)]
    # Its own session: Ctrl-C or a closed terminal reach `apollo up` only, which stops its
    # children in order (a child still importing would print a KeyboardInterrupt traceback).
    return subprocess.Popen(args, env=os.environ.copy(), preexec_fn=_die_with_parent,  # noqa: PLW1509 - our own module
                            start_new_session=True)


def _die_with_parent() -> None:
    """Linux: the child gets SIGTERM when `apollo up` dies, even by SIGKILL."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


async def _report_protections() -> None:
    """Say which sandbox protections are active (never run unprotected silently).

    The probe starts its own event loop, so it runs in a thread.
    """
    try:
        rows = await asyncio.to_thread(protection_report)
    except Exception as exc:  # noqa: BLE001 - a report, never a reason to stop serving
        log.warning("sandbox_protections_unknown", error=repr(exc))
        return
    active = [name for name, ok, _ in rows if ok]
    missing = [name for name, ok, _ in rows if not ok]
    log.info("sandbox_protections", active=active, missing=missing)
