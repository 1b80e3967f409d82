"""The NATS client's errors and connection changes as one structured log line each.

nats-py's default error callback logs every failed reconnect attempt with a full
traceback, as plain text inside the JSON worker logs (dozens per outage). The engine's
connections pass these callbacks instead.
"""

from __future__ import annotations

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

    def callbacks(self) -> dict[str, Any]:
        """Keyword arguments for ``nats.connect``."""
        return {"error_cb": self.on_error, "disconnected_cb": self.on_disconnected,
                "reconnected_cb": self.on_reconnected}

    async def on_error(self, exc: Exception) -> None:
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
        log.info("nats_reconnected", client=self.name)
