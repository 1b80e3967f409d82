"""The serving side of weight sync: ``policy.updated`` in, the endpoint reloaded, the outcome out.

:class:`PolicySync` is an effector over the log, not over a broker's acknowledgements:
on start it handles every update in the log that has no recorded outcome yet, then
follows new ones. Its outcome's id is derived from the update's, so two syncs (or one
restarted after a crash between the reload and the append) record it once; a loader is
asked to load an update it may already have loaded, which every loader treats as done.

Refused without touching the endpoint (``policy.update_failed``; the served weights stay):
a version not newer than the served one, a version below 1, a checkpoint path that does
not exist, an update naming another policy than the run it was filed under. A loader's refusal is recorded the
same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog

from engine.eventlog.port import EventLog
from engine.serving.active import ActivePolicies, active_policies
from engine.serving.history import Outcome, PolicyHistory, active_in, outcome_of
from engine.serving.loaders import LoadFailed, WeightLoader
from events.policy import DEFAULT_POLICY, PolicyActivated, PolicyUpdated, PolicyUpdateFailed, policy_run_id
from handlers.context import derive_id

log = structlog.get_logger("apollo.serving")

HANDLER = "policy_sync"


def outcome_id(update: PolicyUpdated) -> str:
    """The id of the outcome of ``update``: the same whoever records it, however often."""
    return derive_id(update.event_id, HANDLER, "result")


class PolicySync:
    """Makes one endpoint serve each new policy version and records that it does."""

    def __init__(
        self,
        event_log: EventLog,
        loader: WeightLoader,
        *,
        endpoint: str | None = None,
        policy: str = DEFAULT_POLICY,
        registry: ActivePolicies | None = None,
        poll_interval: float = 0.2,
    ) -> None:
        self.log = event_log
        self.loader = loader
        self.endpoint = endpoint
        """The base URL the loader reloads (recorded in the activation; ``None``: every endpoint)."""
        self.policy = policy
        """The policy whose updates this sync serves (its history is run ``policy-<name>``)."""
        self.registry = registry if registry is not None else active_policies()
        self.poll_interval = poll_interval
        self.outcomes: list[Outcome] = []
        """Every outcome this sync recorded or found recorded, in order."""
        self.history = PolicyHistory(event_log, policy_run_id(policy))
        self._next = 0
        """Index in ``history.events`` of the first event not yet handled."""
        self._stop = asyncio.Event()

    def stop(self) -> None:
        self._stop.set()

    async def run(self) -> None:
        """Handle pending updates, then follow the log until :meth:`stop`."""
        while not self._stop.is_set():
            try:
                await self.catch_up()
            except Exception as exc:  # noqa: BLE001 - the log is away for now: the next look retries
                log.warning("policy_sync_failed", policy=self.policy, error=str(exc) or type(exc).__name__)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.poll_interval)

    async def catch_up(self) -> list[Outcome]:
        """Handle every update in the policy's history after the last one handled; return their outcomes.

        The history is read with direct gets (what a worker's credentials allow), not a
        consumer. An update whose handling fails stays next in line for the following look.
        """
        done = []
        await self.history.refresh()
        while self._next < len(self.history.events):
            event = self.history.events[self._next]
            if isinstance(event, PolicyUpdated):
                done.append(await self.handle(event))
            self._next += 1
        return done

    async def handle(self, update: PolicyUpdated) -> Outcome:
        """Serve ``update`` (or refuse it) and record the outcome, once."""
        if update.run_id == self.history.run_id:
            await self.history.refresh()
            history = self.history.events
        else:  # filed under another run: refused below, after a look at that run's outcomes
            history = [r.event for r in await self.log.read_run(update.run_id)]
        recorded = outcome_of(history, update)
        if recorded is None:
            active = active_in(history)
            recorded = await self._decide(update, active)
            await self.log.append(recorded)
            log.info("policy_sync", policy=update.policy, version=update.version, outcome=type(recorded).__name__,
                     reason=getattr(recorded, "reason", None))
        if isinstance(recorded, PolicyActivated):
            self.registry.apply(recorded)
        self.outcomes.append(recorded)
        return recorded

    async def _decide(self, update: PolicyUpdated, active: PolicyActivated | None) -> Outcome:
        reason = refusal(update, active)
        if reason is None:
            started = time.perf_counter()
            try:
                served = await self.loader.load(update, active)
            except LoadFailed as exc:
                reason = exc.reason
            else:
                return self._new(update, PolicyActivated, version=update.version, roles=list(update.roles),
                                 served_model=served, endpoint=self.endpoint, method=self.loader.method,
                                 load_ms=(time.perf_counter() - started) * 1000.0)
        return self._new(update, PolicyUpdateFailed, version=update.version, reason=reason,
                         active_version=active.version if active else None)

    def _new(self, update: PolicyUpdated, event_type: type[Any], **fields: Any) -> Outcome:
        return event_type(  # type: ignore[no-any-return]
            event_id=outcome_id(update), run_id=update.run_id, occurred_at=datetime.now(UTC),
            causation_id=update.event_id, correlation_id=update.correlation_id or update.event_id,
            policy=update.policy, **fields,
        )


def refusal(update: PolicyUpdated, active: PolicyActivated | None) -> str | None:
    """Why ``update`` must not be served, or ``None`` when it may be."""
    if update.run_id != policy_run_id(update.policy):
        return f"an update of policy {update.policy!r} filed under run {update.run_id!r}"
    if update.version < 1:
        return f"version {update.version} is not a policy version (versions start at 1)"
    if active is not None and update.version <= active.version:
        return f"version {update.version} is not newer than the served version {active.version}"
    if not update.roles:
        return "the update names no model role to serve"
    if not update.checkpoint.strip():
        return "the update names no checkpoint"
    if "://" not in update.checkpoint and not Path(update.checkpoint).exists():
        return f"checkpoint not found: {update.checkpoint}"
    return None
