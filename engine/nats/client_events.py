"""The NATS client's errors and connection changes as one structured log line each.

nats-py's default error callback logs every failed reconnect attempt with a full
traceback, as plain text inside the JSON worker logs (dozens per outage). The engine's
connections pass these callbacks instead.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import structlog
from nats.aio.client import Client

log = structlog.get_logger("apollo.nats")


class ClientEvents:
    """Callbacks for one connection; attach the client once connected."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.client: Client | None = None
        self.first_connect_failures: list[BaseException] | None = None
        """While set, failed attempts of the first connect are collected here, not logged:
        the caller reports the outcome once."""
        self.refused: asyncio.Future[BaseException] | None = None
        """Set with the first refusal a retry cannot fix (credentials, TLS trust) while connecting."""
        self.is_refusal: Callable[[BaseException], bool] = lambda exc: False
        self.permission_listeners: list[Callable[[str], bool]] = []
        """Called with the subject of each publish or subscription the server refused; one
        that returns True reports the refusal to its caller, so it is not logged here too."""
        self.reconnect_listeners: list[Callable[[], None]] = []
        """Called after each reconnect: what the server held for this client only (an
        ordered consumer of a restarted server) may be gone and must be made again."""
        self._refusal_logged = False

    def callbacks(self) -> dict[str, Any]:
        """Keyword arguments for ``nats.connect``."""
        return {"error_cb": self.on_error, "disconnected_cb": self.on_disconnected,
                "reconnected_cb": self.on_reconnected}

    async def on_error(self, exc: Exception) -> None:
        if self.client is None and self.refused is not None and self.is_refusal(exc):
            if not self.refused.done():
                self.refused.set_result(exc)
            return  # the connect reports it as one line; no log line per retry
        if self.client is not None and self.is_refusal(exc):
            # credentials revoked or a certificate changed while reconnecting: nats-py keeps
            # trying (a server restart may fix it), the log says so once, not per attempt
            if not self._refusal_logged:
                self._refusal_logged = True
                lines = str(exc).strip().splitlines()
                log.error("nats_refused", client=self.name, error=lines[0] if lines else type(exc).__name__,
                          retrying="until the server accepts this client again")
            return
        refused_subject = permission_violation(exc)
        if refused_subject is not None:
            claimed = [listener(refused_subject) for listener in list(self.permission_listeners)]
            if any(claimed):
                return  # a waiting operation ends with this refusal as its one line
        if self.first_connect_failures is not None:
            self.first_connect_failures.append(exc)
            return
        lines = str(exc).strip().splitlines()
        log.warning("nats_error", client=self.name, error=lines[0] if lines else type(exc).__name__,
                    error_type=type(exc).__name__)

    async def on_disconnected(self) -> None:
        if self.first_connect_failures is not None:
            return  # a failed first attempt: counted by on_error
        if self.client is not None and self.client.is_closed:
            return  # closed on purpose: nothing to report
        log.warning("nats_disconnected", client=self.name)

    async def on_reconnected(self) -> None:
        self._refusal_logged = False
        log.info("nats_reconnected", client=self.name)
        for listener in list(self.reconnect_listeners):
            listener()


_VIOLATION = re.compile(r'permissions violation for (?:publish|subscription) to "?([^"\s]+)"?', re.IGNORECASE)


def permission_violation(exc: BaseException) -> str | None:
    """The subject of a ``Permissions Violation`` error from the server, else ``None``.

    nats-py lower-cases server errors; the JetStream API's own words get their capitals
    back, so the subject reads as the one in the server's configuration.
    """
    match = _VIOLATION.search(str(exc))
    if match is None:
        return None
    subject = match.group(1)
    if not subject.startswith(("$js.", "$kv.", "$o.")):
        return subject
    return ".".join(_API_CASE.get(token, _bucket_case(token)) for token in subject.split("."))


_API_CASE = {word.lower(): word for word in (
    "$JS", "$KV", "$O", "API", "STREAM", "CONSUMER", "INFO", "CREATE", "UPDATE", "DELETE", "DURABLE", "MSG",
    "NEXT", "GET", "DIRECT", "ACK", "FC", "PURGE", "NAMES", "LIST", "LEADER", "STEPDOWN", "SNAPSHOT",
    "RESTORE", "PAUSE", "RESET", "APOLLO",
)}


def _bucket_case(token: str) -> str:
    """``kv_apollo-handled`` -> ``KV_apollo-handled`` (JetStream's bucket stream prefixes)."""
    for prefix in ("kv_", "obj_"):
        if token.startswith(prefix):
            return prefix.upper() + token[len(prefix):]
    return token
