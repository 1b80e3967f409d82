"""Batched direct gets: one round trip per batch of a subject's messages, no consumer to create."""

from __future__ import annotations

import asyncio
import json

from nats.aio.client import Client
from nats.aio.msg import Msg

from engine.nats.jetstream.errors import direct_get_failed

DIRECT_BATCH = 512
_DIRECT_GET_ENDS = ("204", "404")
"""Statuses that end a batched direct get: end of batch, or no (more) messages."""


class _PendingBatch:
    """Replies of one batched direct get, collected by the shared inbox's callback."""

    __slots__ = ("done", "msgs")

    def __init__(self, done: asyncio.Future[None]) -> None:
        self.done = done
        self.msgs: list[Msg] = []


class DirectGets:
    """Direct gets of one stream; every reply comes back on one shared, multiplexed inbox."""

    def __init__(self, nc: Client, stream: str) -> None:
        self.nc = nc
        self.stream = stream
        self._reply_prefix: str | None = None
        self._waiting: dict[str, _PendingBatch] = {}

    async def batch(self, subject_filter: str, start: int) -> list[Msg]:
        """Up to :data:`DIRECT_BATCH` messages matching ``subject_filter`` from ``start`` on."""
        replies = await self._reply_queue()
        token = self.nc._nuid.next().decode()  # nats-py's unique-id generator
        batch = _PendingBatch(asyncio.get_running_loop().create_future())
        self._waiting[token] = batch
        try:
            request = {"seq": start, "next_by_subj": subject_filter, "batch": DIRECT_BATCH}
            await self.nc.publish(
                f"$JS.API.DIRECT.GET.{self.stream}", json.dumps(request).encode(),
                reply=f"{replies}.{token}",
            )
            async with asyncio.timeout(10.0):  # unlike 3.11's wait_for, never drops a cancellation
                await batch.done
            return batch.msgs
        finally:
            self._waiting.pop(token, None)

    async def _reply_queue(self) -> str:
        """Subscribe once to ``<inbox>.*`` and route each reply to its waiting read."""
        if self._reply_prefix is None:
            prefix = self.nc.new_inbox()

            async def route(msg: Msg) -> None:
                batch = self._waiting.get(msg.subject.rsplit(".", 1)[-1])
                if batch is None:
                    return
                status = (msg.headers or {}).get("Status")
                if status:
                    if batch.done.done():
                        return
                    if status in _DIRECT_GET_ENDS:
                        batch.done.set_result(None)
                    else:  # not an answer at all (no responders in a failover): never a short read
                        batch.done.set_exception(direct_get_failed(status, (msg.headers or {}).get("Description")))
                else:
                    batch.msgs.append(msg)

            await self.nc.subscribe(f"{prefix}.*", cb=route)
            self._reply_prefix = prefix
        return self._reply_prefix
