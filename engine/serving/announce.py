"""The trainer's side of weight sync: announce new weights, wait for the serving side's answer."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

from engine.eventlog.port import EventLog
from engine.serving.history import Outcome, PolicyHistory, outcome_of, update_with_version
from events.base import is_valid_run_id
from events.policy import DEFAULT_POLICY, PolicyUpdated, policy_run_id


async def announce_update(
    event_log: EventLog,
    *,
    version: int,
    checkpoint: str,
    policy: str = DEFAULT_POLICY,
    adapter: str | None = None,
    base_model: str = "",
    roles: Sequence[str] = ("policy",),
    trainer_step: int | None = None,
    metrics: dict[str, float] | None = None,
) -> PolicyUpdated:
    """Append ``policy.updated`` for ``version`` (call after the checkpoint is saved).

    Announcing a version the policy's history already has returns the recorded update
    (a trainer restarted after announcing it announces nothing twice).

    Raises:
        ValueError: a version below 1, an empty checkpoint, a policy name that cannot be
            a subject token.
    """
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f"a policy version is a whole number from 1, not {version!r}")
    if not isinstance(checkpoint, str) or not checkpoint.strip():
        raise ValueError("policy.updated needs the checkpoint's location")
    run_id = policy_run_id(policy)
    if not is_valid_run_id(run_id):
        raise ValueError(f"policy name {policy!r} must be letters, digits, '-' or '_'")
    history = [r.event for r in await event_log.read_run(run_id)]
    known = update_with_version(history, version)
    if known is not None:
        return known
    update = PolicyUpdated(
        event_id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"apollo-policy/{policy}/{version}/{checkpoint}")),
        run_id=run_id, occurred_at=datetime.now(UTC), policy=policy, version=version,
        checkpoint=checkpoint, adapter=adapter, base_model=base_model, roles=list(roles),
        trainer_step=trainer_step, metrics=dict(metrics or {}),
    )
    await event_log.append(update)
    return update


async def wait_for_outcome(
    event_log: EventLog, update: PolicyUpdated, *, timeout: float = 60.0, poll_interval: float = 0.1
) -> Outcome:
    """The serving side's ``policy.activated`` or ``policy.update_failed`` for ``update``.

    Raises:
        TimeoutError: nothing answered within ``timeout`` seconds (no PolicySync running?).
    """
    deadline = time.monotonic() + timeout
    history = PolicyHistory(event_log, update.run_id)
    while True:
        await history.refresh()
        found = outcome_of(history.events, update)
        if found is not None:
            return found
        if time.monotonic() >= deadline:
            raise TimeoutError(
                f"no serving side answered policy.updated version {update.version} of policy "
                f"{update.policy!r} within {timeout:g}s (is a PolicySync running?)"
            )
        await asyncio.sleep(poll_interval)
