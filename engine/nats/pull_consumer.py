"""A pull consumer that keeps requests open instead of asking again for every batch.

nats-py's ``fetch`` sends one or two pull requests per call and waits on each message
with its own timer: at a handful of events per episode step that protocol, not the
work, dominates a worker's time. Here a worker keeps "credit" open on the server (pull
requests for as many messages as it has free slots) and messages arrive through one
subscription callback into a local buffer. Credit is only ever asked for free slots, so
a worker never holds more messages than it can start handling, and other workers get
the rest.

Delivered messages do not say which request they answer, so credit is one count: a
message uses one, a status that ends a request (expired, leadership moved, limits
exceeded) gives back what that request had left, per its pending-messages header. Open
requests carry an idle heartbeat; when the server goes quiet for a few seconds (a
restart, a reconnect) every open request is presumed lost and asked for again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import deque

from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

REQUEST_EXPIRES_S = 30.0
"""How long the server keeps one pull request open (then it says 408 and we ask again)."""
HEARTBEAT_S = 1.0
"""The server signals an idle open request this often."""
SILENCE_LIMIT_S = 3 * HEARTBEAT_S
"""A request unheard of for this long is presumed lost by the server."""
STALE_AFTER_S = 3.0
"""A message left in the buffer this long, beyond the caller's capacity, goes back (nak):
well inside the work consumer's 6 s ack wait, which would otherwise send it elsewhere first."""
HEARTBEAT_STATUS = "100"


class ContinuousPull:
    """Credit-based pulling from one durable consumer, on one connection."""

    def __init__(self, nc: Client, stream: str, consumer: str) -> None:
        self._nc = nc
        self._next_subject = f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer}"
        self._inbox = nc.new_inbox()
        self._sub: Subscription | None = None
        self._credit = 0
        self._heard_at = time.monotonic()
        self._buffer: deque[tuple[float, Msg]] = deque()
        """Received, not yet taken: (arrival time, message)."""
        self._waiter: asyncio.Future[None] | None = None
        self._reconnects = 0

    async def start(self) -> None:
        self._sub = await self._nc.subscribe(self._inbox, cb=self._arrived)
        self._reconnects = self._nc.stats["reconnects"]

    async def take(self, batch: int, timeout: float) -> list[Msg]:
        """Up to ``batch`` messages, waiting at most ``timeout`` seconds for the first.

        ``batch`` is the caller's free capacity: credit is topped up to it, never beyond.
        """
        self._forget_lost_requests()
        await self._top_up(batch)
        if not self._buffer:
            await self._arrival_within(timeout)
        count = min(batch, len(self._buffer))
        taken = [self._buffer.popleft()[1] for _ in range(count)]
        await self._release_stale()
        return taken

    async def stop(self) -> list[Msg]:
        """Stop receiving; returns messages delivered but never taken (nak them)."""
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
            self._sub = None
        self._credit = 0
        left, self._buffer = [msg for _, msg in self._buffer], deque()
        return left

    async def _release_stale(self) -> None:
        """Give back messages held beyond the caller's capacity for too long.

        Credit never exceeds free slots, so this only happens when requests presumed lost
        were alive after all; without it those messages would wait for the ack wait.
        """
        now = time.monotonic()
        while self._buffer and now - self._buffer[0][0] > STALE_AFTER_S:
            _, msg = self._buffer.popleft()
            with contextlib.suppress(Exception):
                await msg.nak()

    async def _arrival_within(self, timeout: float) -> None:
        """Wait on a bare future the arrival callback resolves: one loop turn to wake up,
        where an Event under ``wait_for`` takes several (it matters once per delivery)."""
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = loop.call_later(timeout, _settle, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiter = None

    @property
    def open_credit(self) -> int:
        """Messages asked for and not yet received."""
        return self._credit

    @property
    def held(self) -> int:
        """Messages received and not yet taken."""
        return len(self._buffer)

    async def _top_up(self, capacity: int) -> None:
        want = capacity - len(self._buffer) - self.open_credit
        # Ask in chunks (half the capacity at least) so a busy worker does not send one
        # request per message; with nothing open, any shortfall is worth a request.
        if want <= 0 or (self._credit and want * 2 < capacity):
            return
        if not self._credit:
            self._heard_at = time.monotonic()  # silence is measured from the first open request
        body = {"batch": want, "expires": int(REQUEST_EXPIRES_S * 1e9), "idle_heartbeat": int(HEARTBEAT_S * 1e9)}
        await self._nc.publish(self._next_subject, json.dumps(body).encode(), reply=self._inbox)
        self._credit += want

    def _forget_lost_requests(self) -> None:
        reconnects = self._nc.stats["reconnects"]
        lost = reconnects != self._reconnects  # the server side of every open request is gone
        lost = lost or (self._credit > 0 and time.monotonic() - self._heard_at > SILENCE_LIMIT_S)
        self._reconnects = reconnects
        if lost:
            self._credit = 0

    async def _arrived(self, msg: Msg) -> None:
        self._heard_at = time.monotonic()
        headers = msg.headers
        status = headers.get("Status") if headers and not msg.data else None
        if status is None:
            self._buffer.append((time.monotonic(), msg))
            self._credit = max(0, self._credit - 1)
            self._wake()
        elif status != HEARTBEAT_STATUS:  # 404/408/409: a request is over; its unused credit with it
            left = headers.get("Nats-Pending-Messages", "")  # type: ignore[union-attr]
            # A request refused outright (limits) says nothing of its size: start over
            # rather than count on credit that is not there.
            self._credit = max(0, self._credit - int(left)) if left.isdigit() else 0
            self._wake()  # let a waiting taker ask again now rather than at its timeout

    def _wake(self) -> None:
        if self._waiter is not None:
            _settle(self._waiter)


def _settle(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
