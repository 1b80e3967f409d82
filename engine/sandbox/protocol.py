"""Messages between the host, the fork server and the workers (all on AF_UNIX SEQPACKET).

host -> fork server : spawn request (JSON) + 4 fds (code pipe, stdout, stderr, status socket)
fork server -> host : ``HELLO`` once it has warmed up
worker -> host      : ``PIDFD`` (+ the init's pidfd), ``READY`` (+ protections applied),
                      ``DONE`` (the worker's own early exit report), ``STATUS`` (the
                      init's report of the worker's wait status), or ``FAILED``
host -> worker      : one header line (JSON: limits) then the code, on the code pipe
"""

from __future__ import annotations

import json
from typing import Any

HELLO = b"H"
PIDFD = b"P"
READY = b"R"
STATUS = b"S"
DONE = b"D"
FAILED = b"F"
MAX_MESSAGE = 65536


def pack(tag: bytes, body: dict[str, Any]) -> bytes:
    """One tagged JSON message."""
    return tag + json.dumps(body).encode()


def unpack(message: bytes) -> tuple[bytes, dict[str, Any]]:
    """Split a tagged message; an empty message means the peer closed."""
    if not message:
        return b"", {}
    return message[:1], json.loads(message[1:] or b"{}")
