"""Retrying JetStream calls through a failover, for a bounded time.

A leader election makes JetStream answer with timeouts, "no responders" or "temporarily
unavailable" for a few seconds. Commands that submit or read retry such errors, then
fail with one line that says what they were doing and what NATS said last.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import nats.errors
import nats.js.errors
import structlog

from engine.errors import BusUnavailable
from engine.nats.publisher import NO_RESPONDERS, PublishRefused

log = structlog.get_logger("apollo.nats")

T = TypeVar("T")

RETRY_FOR_S = 30.0
"""How long a command keeps retrying through a failover before it gives up."""
_FIRST_WAIT_S = 0.25
_LONGEST_WAIT_S = 2.0

_UNAVAILABLE = 503
"""JetStream's status while a stream or the cluster has no leader."""
_REQUEST_TIMEOUT = 408


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it wraps) is one a failover produces and ends."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, PublishRefused):
            return seen.code in (_UNAVAILABLE, NO_RESPONDERS)
        if isinstance(seen, nats.js.errors.APIError):
            return seen.code in (_UNAVAILABLE, _REQUEST_TIMEOUT)
        if isinstance(seen, (TimeoutError, nats.errors.NoRespondersError, nats.errors.ConnectionReconnectingError)):
            return True
        seen = seen.__cause__
    return False


async def retrying(operation: Callable[[], Awaitable[T]], *, doing: str, within: float = RETRY_FOR_S) -> T:
    """Run ``operation``, retrying transient JetStream errors for up to ``within`` seconds.

    Raises:
        BusUnavailable: still failing after ``within`` seconds (names ``doing``).
        Exception: any error that is not transient, at once and unchanged.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    wait = _FIRST_WAIT_S
    attempts = 0
    while True:
        attempts += 1
        try:
            return await operation()
        except Exception as exc:
            if not is_transient(exc):
                raise
            if loop.time() + wait > deadline:
                msg = f"cannot {doing}: NATS kept failing for {within:g} s ({attempts} tries); last error: {_said(exc)}"
                raise BusUnavailable(msg) from exc
            log.info("nats_retrying", doing=doing, attempt=attempts, error=_said(exc))
            await asyncio.sleep(wait)
            wait = min(wait * 2, _LONGEST_WAIT_S)


def _said(exc: BaseException) -> str:
    return (str(exc) or type(exc).__name__).splitlines()[0]
