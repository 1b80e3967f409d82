"""Connecting to NATS: bounded first connect, one-line refusals, the server checks."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import Any, TypeVar

import nats.errors
from nats.aio.client import Client

from engine.errors import AccessDenied, ConnectError, EngineError
from engine.nats import header_lines
from engine.nats.client_events import ClientEvents
from engine.nats.security import ClientSecurity, connect_failure, shown_url
from engine.nats.server import MIN_SERVER_VERSION

T = TypeVar("T")

DEFAULT_CONNECT_TIMEOUT_S = 5.0
"""How long a first connection is tried before a command gives up (``nats.connect_timeout``)."""


async def connect_within(  # the whole connect's bound
    url: str, timeout: float, name: str, client_events: ClientEvents, security: ClientSecurity | None = None
) -> Client:
    """A connected client, or :class:`ConnectError` after ``timeout`` seconds of trying.

    A refusal no retry can fix (credentials rejected or missing, an untrusted server
    certificate) ends the connect at once, with one line saying what was refused.

    nats-py retries a failed first connect for ever when reconnecting is allowed, and
    reports each attempt through the error callback; here the attempts are counted
    quietly and the whole connect is bounded, so a dead URL ends a command with one line.
    """
    servers = [part.strip() for part in url.split(",") if part.strip()]
    url = shown_url(url)  # the messages below never echo a password written into the URL
    security = security or ClientSecurity()
    options = security.connect_options()  # a bad setting fails before any attempt
    failures: list[BaseException] = []
    client_events.first_connect_failures = failures
    client_events.refused = asyncio.get_running_loop().create_future()
    client_events.is_refusal = lambda exc: connect_failure(exc, url, security) is not None
    header_lines.install()
    nc = Client()
    try:
        await _unless_refused(
            asyncio.wait_for(
                nc.connect(
                    servers,
                    connect_timeout=min(timeout, 5.0),
                    allow_reconnect=True,
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=0.5,
                    name=name,
                    **client_events.callbacks(),
                    **options,
                ),
                timeout,
            ),
            client_events.refused,
        )
    except _Refused as refused:
        with contextlib.suppress(Exception):
            await nc.close()
        raise ConnectError(connect_failure(refused.exc, url, security) or str(refused.exc)) from refused.exc
    except (TimeoutError, OSError, nats.errors.Error) as exc:
        with contextlib.suppress(Exception):
            await nc.close()
        reason = connect_failure_reason(failures[-1] if failures else exc)
        msg = f"cannot reach NATS at {url} within {timeout:g} s: {reason}"
        raise ConnectError(msg) from exc
    finally:
        client_events.first_connect_failures = None
    client_events.client = nc
    if security.tls and not connection_encrypted(nc):
        await nc.close()
        msg = f"NATS at {url} does not offer TLS, but a CA bundle or client certificate is configured"
        raise ConnectError(msg)
    return nc


class _Refused(EngineError):  # carries the server's refusal
    def __init__(self, exc: Any) -> None:
        super().__init__(str(exc))
        self.exc = exc


async def connect_client(
    url: str, *, security: ClientSecurity | None = None, name: str = "apollo",
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_S,
) -> tuple[Client, ClientEvents]:
    """A plain nats-py client connected as the event log connects (credentials, TLS, one-line
    refusals), with its callbacks; for readers that use JetStream directly (a trainer)."""
    client_events = ClientEvents(name)
    nc = await connect_within(url, connect_timeout, name, client_events, security)
    return nc, client_events


async def permitted(client_events: ClientEvents, attempt: Awaitable[T]) -> T:
    """Await ``attempt`` and return its result, ending it with :class:`AccessDenied` at the
    server's first permission refusal (the refused JetStream request would otherwise time
    out and be retried)."""
    refused: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def on_refusal(subject: str) -> bool:
        if refused.done():
            return False
        refused.set_result(subject)
        return True

    client_events.permission_listeners.append(on_refusal)
    try:
        return await _unless_refused(attempt, refused)
    except _Refused as exc:
        msg = f"NATS refused this client permission to publish to {exc.exc}"
        raise AccessDenied(msg) from None
    finally:
        client_events.permission_listeners.remove(on_refusal)


async def _unless_refused(attempt: Awaitable[T], refused: asyncio.Future[Any]) -> T:
    """Await ``attempt`` for its result; raise :class:`_Refused` (cancelling it) as soon as
    ``refused`` is set."""
    task = asyncio.ensure_future(attempt)
    try:
        await asyncio.wait({task, refused}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        task.cancel()
        raise
    if not task.done():
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        raise _Refused(refused.result())
    return task.result()


def connection_encrypted(nc: Client) -> bool:
    """Whether this connection runs over TLS (its socket transport carries an SSL object)."""
    writer = getattr(getattr(nc, "_transport", None), "_io_writer", None)  # nats-py exposes no accessor
    inner = getattr(writer, "transport", None)
    return bool(inner is not None and inner.get_extra_info("ssl_object") is not None)


def connect_failure_reason(exc: BaseException) -> str:
    """One line saying why a connection failed (``connection refused``, ``timed out``...)."""
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (is nats-server running there?)"
    if isinstance(exc, TimeoutError | nats.errors.TimeoutError):
        return "no answer (timed out)"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc).strip().splitlines()
    return text[0] if text and text[0] else type(exc).__name__


def check_server(nc: Client) -> None:
    """Refuse a server too old for the settings the engine uses, or one without JetStream."""
    version = nc.connected_server_version
    found = (version.major, version.minor, version.patch)
    if found < MIN_SERVER_VERSION:
        wanted = ".".join(map(str, MIN_SERVER_VERSION))
        msg = (
            f"nats-server {'.'.join(map(str, found))} is too old: apollo needs >= {wanted} "
            "(older servers silently ignore settings the engine uses)"
        )
        raise ConnectError(msg)
    if not nc._server_info.get("jetstream"):  # no public accessor in nats-py
        msg = "the NATS server does not have JetStream enabled (start it with -js)"
        raise ConnectError(msg)
