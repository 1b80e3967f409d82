"""One connection to apollo's engine per verl agent-loop worker process (and event loop).

The bridge connects to the configured engine (``nats_url``, else apollo's own settings:
``APOLLO_NATS_URL``, ``APOLLO_CONFIG``...), never starts one, and by default runs an
in-process apollo worker (the same dispatcher, routes, sandboxed tools and grader as
``apollo worker``) so the verl nodes do the episodes' work next to the generation.
Every wait on the log is bounded: a log that does not answer within ``log_timeout`` raises
:class:`EngineUnreachable` naming the URL, never a hang of verl's batch.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import msgspec

from engine.app.bootstrap import Runtime, open_runtime
from engine.config.settings import load_settings
from engine.errors import ConfigError, ConnectError, EngineError
from events.record import Recorded
from events.run import RUN_ENDINGS, ProblemSubmitted


class EngineUnreachable(EngineError):
    """Apollo's engine (its NATS event log) could not be reached or did not answer in time."""


class BridgeOptions(msgspec.Struct, frozen=True, kw_only=True):
    nats_url: str | None = None
    """The engine's NATS URL; ``None``: apollo's settings (``APOLLO_NATS_URL``, the config file)."""
    config_file: str | None = None
    """An apollo config file (the engine's settings: tools, grading, NATS credentials)."""
    workers: bool = True
    """Run an apollo worker in this process (False: the engine's own workers do the work)."""
    log_timeout: float = 30.0
    """Seconds one read or write of the log may take before :class:`EngineUnreachable`."""
    poll_interval: float = 0.2


class Bridge:
    """The process's connected runtime: submit a run, wait for its end, read it."""

    def __init__(self, runtime: Runtime, options: BridgeOptions, url: str) -> None:
        self.runtime = runtime
        self.options = options
        self.url = url
        self.last_version: int | None = None
        """The newest policy version (verl's ``global_steps``) a server reported here."""
        self._worker: asyncio.Task[None] | None = None
        self._dispatcher: Any = None

    @classmethod
    async def connect(cls, options: BridgeOptions) -> Bridge:
        overrides = {"nats": {"url": options.nats_url}} if options.nats_url else None
        try:
            settings = load_settings(options.config_file, overrides=overrides)
        except ConfigError as exc:
            raise EngineUnreachable(f"apollo's settings for the verl agent loop are unusable: {exc}") from exc
        url = settings.nats.url or "(none configured: no nats_url, APOLLO_NATS_URL or running `apollo up`)"
        try:
            runtime = await asyncio.wait_for(open_runtime(settings, start_server=False, quiet=True),
                                             options.log_timeout + settings.nats.connect_timeout)
        except (EngineError, OSError, TimeoutError) as exc:  # ConnectError, StreamSetupError, ...
            msg = f"apollo's engine at {url} is unreachable from the verl agent loop: {exc or type(exc).__name__}"
            raise EngineUnreachable(msg) from exc
        bridge = cls(runtime, options, url)
        runtime.wire_services()  # the router holds the relay provider for ``verl:`` models
        if options.workers:
            bridge._dispatcher = runtime.dispatcher()
            bridge._worker = asyncio.create_task(bridge._dispatcher.run())
        return bridge

    @property
    def nc(self) -> Any:
        return self.runtime.log.nc

    def saw_version(self, version: int) -> None:
        if self.last_version is None or version > self.last_version:
            self.last_version = version

    async def submit(self, event: ProblemSubmitted) -> None:
        # deferred: the service layer (and what it pulls in) serves only this call here
        from engine.app.operations import submit

        await self._bounded(submit(self.runtime.log, event), f"submitting run {event.run_id}")

    async def wait_for_end(self, run_id: str, timeout: float) -> list[Recorded] | None:
        """The run's records once it ended; ``None`` if it did not end within ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            records = await self.read(run_id)
            if any(isinstance(r.event, RUN_ENDINGS) for r in records):
                return records
            if loop.time() >= deadline:
                return None
            await asyncio.sleep(self.options.poll_interval)

    async def read(self, run_id: str) -> list[Recorded]:
        return await self._bounded(self.runtime.log.read_run(run_id), f"reading run {run_id}")

    async def _bounded(self, work: Any, doing: str) -> Any:
        try:
            return await asyncio.wait_for(work, self.options.log_timeout)
        except TimeoutError as exc:
            msg = f"apollo's event log at {self.url} did not answer within {self.options.log_timeout:g} s ({doing})"
            raise EngineUnreachable(msg) from exc
        except (ConnectError, OSError) as exc:
            raise EngineUnreachable(f"apollo's event log at {self.url} failed while {doing}: {exc}") from exc

    async def close(self) -> None:
        if self._dispatcher is not None:
            self._dispatcher.stop()
        if self._worker is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._worker, 30)
        await self.runtime.close()


_BRIDGES: dict[tuple[int, bytes], Bridge] = {}
_OPENING: dict[tuple[int, bytes], asyncio.Lock] = {}


async def bridge_for(options: BridgeOptions) -> Bridge:
    """The process's bridge for ``options`` on the running event loop (connected once)."""
    key = (id(asyncio.get_running_loop()), msgspec.json.encode(options))
    lock = _OPENING.setdefault(key, asyncio.Lock())
    async with lock:
        bridge = _BRIDGES.get(key)
        if bridge is None:
            bridge = _BRIDGES[key] = await Bridge.connect(options)
    return bridge


async def close_bridges() -> None:
    """Close every bridge of the running event loop (tests; verl's workers end with their process)."""
    here = id(asyncio.get_running_loop())
    for key in [k for k in _BRIDGES if k[0] == here]:
        bridge = _BRIDGES.pop(key)
        _OPENING.pop(key, None)
        await bridge.close()
