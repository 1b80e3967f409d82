"""The handled-marks port: which handler finished which event, in a KV bucket."""

from __future__ import annotations

from typing import Any

import nats.js.errors
from nats.aio.client import Client

from engine.nats.jetstream.setup import HANDLED_BUCKET, kv_key


class JetStreamHandledMarks:
    """Exactly-once bookkeeping in the ``apollo-handled`` bucket."""

    def __init__(self, nc: Client, bucket: Any) -> None:
        self.nc = nc
        self.bucket = bucket
        """nats-py's KV handle."""

    async def mark_handled(self, key: str) -> None:
        """Record (handler, event) as done; a plain publish into the KV stream, not awaited.

        The record is a second line of defence: the run's history already shows which
        outputs exist. Skipping the round trip keeps it off the hot path.
        """
        await self.nc.publish(f"$KV.{HANDLED_BUCKET}.{kv_key(key)}", b"1")

    async def was_handled(self, key: str) -> bool:
        try:
            await self.bucket.get(kv_key(key))
        except nats.js.errors.KeyNotFoundError:
            return False
        return True
