"""The host's reading of a worker's status channel once the code runs: strict and bounded.

Only the worker's init (C) and its outside parent (A) hold the channel by then, but the
host trusts none of it: every message is size- and depth-bounded and strictly decoded
(:func:`engine.sandbox.protocol.unpack`), numbers are range-checked, passed fds are closed
at once, and at most :data:`MAX_MESSAGES` are decoded per call. Nothing here raises for what a
peer sends.
"""

from __future__ import annotations

import contextlib
import math
import os
import socket
from dataclasses import dataclass

from engine.sandbox import aio, protocol

MAX_MESSAGES = 64
"""Messages read per call; after that the channel is only waited on for its end."""
MAX_CPU_S = 1e7


@dataclass(frozen=True)
class ExitReport:
    """How the code's process ended, as the init saw it."""

    returncode: int
    """Exit status, or minus the signal number."""
    cpu_s: float = 0.0
    reaped: bool = False
    """The init killed and reaped every other process of the call before reporting."""


def exit_report(message: bytes) -> ExitReport | None:
    """The report in a ``STATUS`` message, or ``None`` for anything else or anything odd."""
    tag, body = protocol.unpack(message)
    if tag != protocol.STATUS:
        return None
    status = body.get("status")
    if type(status) is not int or not 0 <= status <= 0xFFFF:
        return None
    try:
        code = os.waitstatus_to_exitcode(status)
    except ValueError:  # stopped or continued: not an exit
        return None
    reaped = body.get("reaped") is True
    return ExitReport(returncode=code, cpu_s=_seconds(body.get("cpu_s")), reaped=reaped)


def _seconds(value: object) -> float:
    if type(value) not in (int, float):
        return 0.0
    number = float(value)  # type: ignore[arg-type]
    return number if math.isfinite(number) and 0.0 <= number <= MAX_CPU_S else 0.0


async def collect(sock: socket.socket) -> ExitReport | None:
    """Read the channel until its peers are gone, or until the init reports that it has
    reaped the whole call; the last valid exit report, if any."""
    report: ExitReport | None = None
    for _ in range(MAX_MESSAGES):
        try:
            message, fds = await aio.recv_msg(sock, max_fds=1)
        except OSError:
            return report
        for fd in fds:  # nothing is expected here: never keep what a peer passes
            with contextlib.suppress(OSError):
                os.close(fd)
        if not message:
            return report
        report = exit_report(message) or report
        if report is not None and report.reaped:
            return report
    await _until_closed(sock)
    return report


async def _until_closed(sock: socket.socket) -> None:
    """Discard the rest, undecoded, up to the end of the channel."""
    while True:
        try:
            message, fds = await aio.recv_msg(sock, max_fds=1)
        except OSError:
            return
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        if not message:
            return
