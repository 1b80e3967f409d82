"""Keeps a process's :class:`ActivePolicies` in step with the log's ``policy.activated`` events.

A worker process that does not run the :class:`engine.serving.sync.PolicySync` learns
the served versions here, so its model calls carry them too.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence

import structlog

from engine.eventlog.port import EventLog
from engine.serving.active import ActivePolicies, active_policies
from events.policy import DEFAULT_POLICY, PolicyActivated, policy_run_id

log = structlog.get_logger("apollo.serving")


class ActivationWatcher:
    """Reads activations from the log into a registry: once, or following it."""

    def __init__(
        self, event_log: EventLog, registry: ActivePolicies | None = None, *,
        policies: Sequence[str] = (DEFAULT_POLICY,), poll_interval: float = 0.5,
    ) -> None:
        self.log = event_log
        self.registry = registry if registry is not None else active_policies()
        self.policies = list(policies)
        self.poll_interval = poll_interval
        self._after_seq: dict[str, int] = dict.fromkeys(self.policies, 0)
        self._stop = asyncio.Event()

    async def catch_up(self) -> int:
        """Apply every activation after the last one read; return how many changed the registry.

        Each policy's history is read with direct gets, which a worker's credentials allow.
        """
        changed = 0
        for policy in self.policies:
            for record in await self.log.read_run(policy_run_id(policy), after_seq=self._after_seq[policy]):
                self._after_seq[policy] = record.seq
                if isinstance(record.event, PolicyActivated) and self.registry.apply(record.event):
                    changed += 1
        return changed

    async def run(self) -> None:
        while not self._stop.is_set():
            try:
                await self.catch_up()
            except Exception as exc:  # noqa: BLE001 - the bus is away for now: keep the versions known, retry
                log.warning("policy_watch_failed", error=str(exc) or type(exc).__name__)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.poll_interval)

    def stop(self) -> None:
        self._stop.set()


@contextlib.asynccontextmanager
async def watching_activations(event_log: EventLog, registry: ActivePolicies | None = None) -> AsyncIterator[None]:
    """Keep this process's served versions current while the block runs (workers' model calls
    then carry them); the versions already activated are read before the block starts."""
    watcher = ActivationWatcher(event_log, registry)
    try:
        await watcher.catch_up()
    except Exception as exc:  # noqa: BLE001 - workers start anyway; the loop below retries
        log.warning("policy_watch_failed", error=str(exc) or type(exc).__name__)
    task = asyncio.create_task(watcher.run())
    try:
        yield
    finally:
        # Cancelled, not awaited: a read hanging on a server going down must not delay a stop.
        watcher.stop()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
