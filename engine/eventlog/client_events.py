"""The NATS client's errors and connection changes as one structured log line each.

nats-py's default error callback logs every failed reconnect attempt with a full
traceback, as plain text inside the JSON worker logs (dozens per outage). The engine's
connections pass these callbacks instead.
"""

from __future__ import annotations

from typing import Any

import structlog

log = structlog.get_logger("apollo.nats")


def client_callbacks(name: str) -> dict[str, Any]:
    """Keyword arguments for ``nats.connect``: error, disconnect and reconnect callbacks."""

    async def on_error(exc: Exception) -> None:
        lines = str(exc).strip().splitlines()
        log.warning("nats_error", client=name, error=lines[0] if lines else type(exc).__name__,
                    error_type=type(exc).__name__)

    async def on_disconnected() -> None:
        log.warning("nats_disconnected", client=name)

    async def on_reconnected() -> None:
        log.info("nats_reconnected", client=name)

    return {"error_cb": on_error, "disconnected_cb": on_disconnected, "reconnected_cb": on_reconnected}
