"""The composition root: settings in, connected log and wired services out."""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from engine.config.merge import deep_merge
from engine.config.settings import Settings, default_data_dir, validate
from engine.errors import ConfigError, ConnectError
from engine.models.nats_relay import relay_provider
from engine.nats.jetstream import JetStreamEventLog
from engine.nats.security import ClientSecurity
from engine.nats.server import NatsServerProcess, embedded_secret
from engine.plugins import RegistryGrader, check_settings, load_plugins, resolve_run_settings
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.runtime.engine_state import EngineState, clear_state, live_engine, live_engine_url, write_state
from engine.tools.registry import ToolRegistry
from handlers.context import Services
from handlers.ports import ModelClient
from handlers.routes import ROUTES
from handlers.run_settings import ModelSpec
from handlers.workflows import RUN_SECTIONS

if TYPE_CHECKING:
    from engine.models.router import ModelRouter

log = structlog.get_logger("apollo.engine")

@dataclass
class Runtime:
    """A connected engine: the event log, the services, and the server we own (if any)."""

    settings: Settings
    log: JetStreamEventLog
    server: NatsServerProcess | None = None
    services: Services | None = None
    closers: list[Any] = field(default_factory=list)

    @property
    def owns_server(self) -> bool:
        return self.server is not None

    def wire_services(self) -> Services:
        if self.services is None:
            # ``verl:`` calls go over NATS to the agent loop holding the sample
            providers = {"verl:": relay_provider(self.log.nc)} if hasattr(self.log, "nc") else {}
            self.services, self.closers = build_services(self.settings, model_providers=providers)
        return self.services

    def dispatcher(self, concurrency: int | None = None, *, kind: type[Dispatcher] = Dispatcher) -> Dispatcher:
        """A worker's dispatcher over this runtime's log and services (``kind``: a subclass)."""
        worker = self.settings.worker
        settings = DispatcherSettings(
            concurrency=concurrency or worker.concurrency,
            max_deliveries=worker.max_deliveries,
            heartbeat=max(0.2, self.settings.nats.ack_wait / 3),
        )
        return kind(self.log, ROUTES, self.wire_services(), settings)

    async def close(self) -> None:
        for closer in reversed(self.closers):
            with contextlib.suppress(Exception):
                result = closer()
                if asyncio.iscoroutine(result):
                    await result
        await self.log.close()
        if self.server is not None:
            self.server.stop()
            _clear_state(self.settings, self.server)


async def open_runtime(settings: Settings, *, start_server: bool, manage_streams: bool = False,
                       quiet: bool = False) -> Runtime:
    """Connect to the configured or running engine; start an embedded server if allowed.

    Only the engine (``manage_streams``, for `apollo up` and `apollo worker`) or a command
    that started its own server applies the stream definitions; clients that submit or
    read only look the stream up, so a failover cannot fail them on definitions.
    ``quiet`` (commands that only read, or print their own line) logs the embedded
    server's start at debug level: it is how they work, not news to their user.

    Raises:
        ConnectError: nothing to connect to and ``start_server`` is false, or NATS is
            unreachable.
    """
    load_plugins(settings)  # a bad plugin stops every command before anything starts
    running = None if settings.nats.url else live_engine(default_data_dir(settings))
    if running is not None and not running.shared and not quiet and running.owner_pid != os.getpid():
        raise ConnectError(_private_server_message(settings, running))
    url = settings.nats.url or (running.url if running is not None else None)
    server = None
    if url is None:
        if not start_server:
            msg = "no apollo engine is running: start one with `apollo up` (or set APOLLO_NATS_URL)"
            raise ConnectError(msg)
        server = start_embedded_server(settings, quiet=quiet, shared=manage_streams)
        url = server.url
    try:
        event_log = await JetStreamEventLog.connect(
            url,
            inline_limit=settings.nats.inline_limit,
            max_event_bytes=settings.nats.max_event_bytes,
            replicas=settings.nats.replicas,
            ack_wait=settings.nats.ack_wait,
            connect_timeout=settings.nats.connect_timeout,
            manage_streams=manage_streams or server is not None,
            security=client_security(settings, url),
        )
    except BaseException:  # Ctrl-C while connecting too: never leave our server behind
        if server is not None:
            server.stop()
            _clear_state(settings, server)
        raise
    return Runtime(settings=settings, log=event_log, server=server)


def _private_server_message(settings: Settings, running: EngineState) -> str:
    """Why a command that needs workers does not use another command's private server."""
    return (f"another apollo command (pid {running.owner_pid}) is using the NATS server of "
            f"{default_data_dir(settings)} privately, with its own workers, and stops it when it ends: "
            "wait for that command to finish, or start the engine with `apollo up` so that commands share it")


def start_embedded_server(settings: Settings, *, quiet: bool = False, shared: bool = False) -> NatsServerProcess:
    """Start nats-server on a free loopback port over the persistent store dir.

    The server ends with this process however it ends (SIGKILL included): it gets
    SIGTERM from the kernel when its parent dies. ``shared`` marks it as an engine's
    (`apollo up`) in the state file; a command's private server is not offered to commands
    that need workers, since it ends with the command.
    """
    data_dir = default_data_dir(settings)
    store = Path(settings.nats.store_dir).expanduser() if settings.nats.store_dir else data_dir / "nats"
    server = NatsServerProcess(store_dir=store, fsync_always=settings.nats.fsync_always,
                               token=embedded_secret(data_dir, create=True), die_with_parent=True).start()
    write_state(data_dir, url=server.url, server_pid=server.process.pid if server.process else None,
                store_dir=store, shared=shared)
    (log.debug if quiet else log.info)("embedded_server_started", url=server.url, store_dir=str(store))
    return server


def client_security(settings: Settings, url: str) -> ClientSecurity:
    """The credentials and TLS this process presents at ``url``: the configured ones, or,
    for this data dir's embedded server (``apollo up`` and its worker children), its secret."""
    embedded = settings.nats.url is None or settings.nats.url == running_engine_url(settings)
    token = embedded_secret(default_data_dir(settings)) if embedded and url.startswith("nats://127.0.0.1:") else None
    return ClientSecurity.from_settings(settings.nats, embedded_token=token)


def running_engine_url(settings: Settings) -> str | None:
    """URL of the engine another live apollo process runs here, if any (a dead one is
    cleaned up, saying so: see engine/runtime/engine_state.py)."""
    return live_engine_url(default_data_dir(settings))


def _clear_state(settings: Settings, server: NatsServerProcess) -> None:
    clear_state(default_data_dir(settings), server.process.pid if server.process is not None else None)


def build_services(settings: Settings, *, model_providers: dict[str, Any] | None = None,
                   ) -> tuple[Services, list[Any]]:
    """Model router, tools and grader, built once per process (``model_providers``: model spec
    prefix -> client provider, see :class:`engine.models.router.ModelRouter`)."""
    # deferred: the router pulls in openai and the pool multiprocessing, which `apollo --help` never needs
    from engine.grading.pool import ProcessPoolGrader
    from engine.models.router import ModelRouter

    plugins = load_plugins(settings)
    check_settings(settings, plugins)  # refuse to start half-configured
    catalog = plugins.catalog()
    router = ModelRouter(providers=model_providers)
    pool_grader = ProcessPoolGrader(numeric_tolerance=settings.grading.numeric_tolerance)
    pool_grader.start_in_background()  # a cold pool costs the first grade about a second
    grader = RegistryGrader(pool_grader, catalog=catalog, settings=settings.grading.as_settings())
    runners = build_tools(settings)
    if settings.episode.enable_python_code or settings.evolve.verifier_episode.enable_python_code:
        warm = getattr(runners.get("python_code"), "start_in_background", None)
        if warm is not None:
            warm()  # the sandbox's fork server takes seconds to start: not on the first call's path
    tools = ToolRegistry(runners)
    services = Services(
        models=KeyedModelRouter(router, settings),
        tools=tools,
        grader=grader,
        settings_for_run=lambda overrides: settings_for_run(settings, overrides),
        catalog=catalog,
    )
    return services, [router.close, tools.close, grader.close]


def build_tools(settings: Settings) -> dict[str, Any]:
    """Every registered tool keyed by its tag: built-ins and plugins, through one registry."""
    return load_plugins(settings).tool_runners(settings)


class KeyedModelRouter:
    """Adds the live API keys back: recorded run settings never contain secrets."""

    def __init__(self, router: ModelRouter, settings: Settings) -> None:
        self._router = router
        self._settings = settings

    def client_for(self, role: str, spec: ModelSpec, *, branch: str | None = None) -> ModelClient:
        return self._router.client_for(role, spec, branch=branch, api_key=self._api_key(role, branch))

    def _api_key(self, role: str, branch: str | None) -> str:
        """The live key of a role, or of a branch's model (evolve runs with branches)."""
        spec = next((b for b in self._settings.branches if b.branch_id == branch), None)
        if spec is None:
            return self._settings.model_for(role).api_key
        if role == "policy":
            return spec.policy.api_key
        verifier = spec.verifier or self._settings.evolve.default_verifier or self._settings.model_for("verifier")
        return verifier.api_key


def settings_for_run(settings: Settings, overrides: dict[str, Any]) -> dict[str, Any]:
    """The engine's run settings with a submission's overrides laid over (validated)."""
    base = settings.run_settings()
    if not overrides:
        return resolve_run_settings(base, load_plugins(settings))
    if not isinstance(overrides, dict):
        msg = "config overrides must be a mapping"
        raise ValueError(msg)
    merged = deep_merge(base, overrides)
    try:
        validate({key: merged[key] for key in RUN_SECTIONS if key in merged})
    except ConfigError as exc:
        raise ValueError(str(exc)) from exc
    unknown = set(merged) - set(RUN_SECTIONS)
    if unknown:
        msg = f"unknown override section(s): {', '.join(sorted(unknown))}"
        raise ValueError(msg)
    return resolve_run_settings(merged, load_plugins(settings))
