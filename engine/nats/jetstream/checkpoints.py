"""The checkpoint port: projection checkpoints in a KV bucket, big ones in the Object Store."""

from __future__ import annotations

import json
from typing import Any

import nats.js.errors

from engine.nats.jetstream.payloads import PAYLOAD_HEADER, Payloads
from engine.nats.jetstream.setup import kv_key


class JetStreamCheckpoints:
    """Checkpoints in the ``apollo-checkpoints`` bucket; one over the inline limit is kept
    in the Object Store and the bucket holds its digest."""

    def __init__(self, bucket: Any, payloads: Payloads) -> None:
        self.bucket = bucket
        """nats-py's KV handle."""
        self.payloads = payloads

    async def put_checkpoint(self, name: str, data: bytes) -> None:
        if len(data) > self.payloads.inline_limit:
            digest = await self.payloads.put(data)
            data = json.dumps({PAYLOAD_HEADER: digest}).encode()
        await self.bucket.put(kv_key(name), data)

    async def get_checkpoint(self, name: str) -> bytes | None:
        try:
            entry = await self.bucket.get(kv_key(name))
        except nats.js.errors.KeyNotFoundError:
            return None
        data = bytes(entry.value or b"")
        if data.startswith(b'{"' + PAYLOAD_HEADER.encode()):
            digest = json.loads(data)[PAYLOAD_HEADER]
            return await self.payloads.materialize(b"", {PAYLOAD_HEADER: digest})
        return data
