"""Big bodies in the Object Store: a message or checkpoint over the inline limit is stored
there under its SHA-256 and a small stub goes in its place."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import nats.js.errors

PAYLOAD_HEADER = "Apollo-Payload-Sha256"
"""Set on a stub message whose real body lives in the Object Store under this hash."""


class Payloads:
    """The Object Store of offloaded bodies, shared by the event store, the work queue and
    the checkpoints."""

    def __init__(self, store: Any, *, inline_limit: int) -> None:
        self.store = store
        """nats-py's object store handle."""
        self.inline_limit = inline_limit
        """Bodies longer than this many bytes are stored here, not in the message."""

    async def put(self, data: bytes) -> str:
        """Store a body that is over :attr:`inline_limit` (once per content) and return its digest."""
        digest = hashlib.sha256(data).hexdigest()
        try:
            await self.store.get_info(digest)
        except nats.js.errors.ObjectNotFoundError:
            await self.store.put(digest, data)
        return digest

    async def materialize(self, data: bytes, headers: dict[str, str] | None) -> bytes:
        """The real body of a message: fetched from the Object Store when it is a stub."""
        digest = (headers or {}).get(PAYLOAD_HEADER)
        if not digest:
            return data
        result = await self.store.get(digest)
        return bytes(result.data or b"")


def stub(data: bytes, digest: str) -> bytes:
    """The small body published in place of a big one."""
    return json.dumps({"payload_sha256": digest, "size": len(data)}).encode()
