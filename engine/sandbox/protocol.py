"""Messages between the host, the fork server and the workers (all on AF_UNIX SEQPACKET).

host -> fork server : spawn request (JSON) + 4 fds (code pipe, stdout, stderr, status socket)
fork server -> host : ``HELLO`` once it has warmed up
worker -> host      : ``PIDFD`` (+ the init's pidfd) from A, ``READY`` (+ protections
                      applied) from D before it reads the code, ``STATUS`` (the init's report
                      of the worker's wait status) from C, or ``FAILED``
host -> worker      : one header line (JSON: limits) then the code, on the code pipe

The user's code never holds the status socket (D closes it before reading the code), but
the host still decodes every message as untrusted: bounded in size and nesting, strict
JSON, and any garbage becomes ``(GARBAGE, {})`` rather than an exception.
"""

from __future__ import annotations

import json
from typing import Any

HELLO = b"H"
PIDFD = b"P"
READY = b"R"
STATUS = b"S"
FAILED = b"F"
GARBAGE = b"?"
MAX_MESSAGE = 65536
MAX_DEPTH = 8
"""Deepest nesting of a message body the host accepts (READY's is 2)."""


def pack(tag: bytes, body: dict[str, Any]) -> bytes:
    """One tagged JSON message."""
    return tag + json.dumps(body).encode()


def unpack(message: bytes) -> tuple[bytes, dict[str, Any]]:
    """Split a tagged message; an empty message means the peer closed.

    Never raises: oversized, non-UTF-8, non-JSON, non-finite numbers, too deep, or a body
    that is not an object all give ``(GARBAGE, {})``.
    """
    if not message:
        return b"", {}
    if len(message) > MAX_MESSAGE or not _shallow(message, MAX_DEPTH):
        return GARBAGE, {}
    try:
        body = json.loads(message[1:].decode("utf-8") or "{}", parse_constant=_refuse)
    except (ValueError, RecursionError):
        return GARBAGE, {}
    if not isinstance(body, dict):
        return GARBAGE, {}
    return message[:1], body


def _shallow(message: bytes, limit: int) -> bool:
    """No more than ``limit`` open brackets at once (counted on raw bytes, strings included)."""
    depth = 0
    for byte in message:
        if byte in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return False
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return True


def _refuse(name: str) -> Any:
    raise ValueError(f"non-finite number {name}")
