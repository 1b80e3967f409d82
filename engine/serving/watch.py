"""Keeps a process's :class:`ActivePolicies` in step with the log's ``policy.activated`` events.

A worker process that does not run the :class:`engine.serving.sync.PolicySync` learns
the served versions here, so its model calls carry them too.
"""

from __future__ import annotations

import asyncio
import contextlib

from engine.eventlog.port import EventLog
from engine.serving.active import ActivePolicies, active_policies
from events.policy import POLICY_ACTIVATIONS, PolicyActivated


class ActivationWatcher:
    """Reads activations from the log into a registry: once, or following it."""

    def __init__(
        self, event_log: EventLog, registry: ActivePolicies | None = None, *, poll_interval: float = 0.5
    ) -> None:
        self.log = event_log
        self.registry = registry if registry is not None else active_policies()
        self.poll_interval = poll_interval
        self._after_seq = 0
        self._stop = asyncio.Event()

    async def catch_up(self) -> int:
        """Apply every activation after the last one read; return how many changed the registry."""
        changed = 0
        async for record in self.log.read_all(POLICY_ACTIVATIONS, after_seq=self._after_seq):
            self._after_seq = record.seq
            if isinstance(record.event, PolicyActivated) and self.registry.apply(record.event):
                changed += 1
        return changed

    async def run(self) -> None:
        while not self._stop.is_set():
            await self.catch_up()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.poll_interval)

    def stop(self) -> None:
        self._stop.set()
