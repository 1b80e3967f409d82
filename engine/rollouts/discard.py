"""Records what the trainer discards: ``rollout.discarded`` on each trajectory's own run."""

from __future__ import annotations

from datetime import UTC, datetime

from engine.eventlog.port import EventLog
from events.policy import RolloutDiscarded
from handlers.context import derive_id
from replay.training.subscription import Discarded, DiscardRecorder


def discard_recorder(event_log: EventLog) -> DiscardRecorder:
    """An ``on_discard`` for :class:`replay.training.RolloutSubscription` that appends
    ``rollout.discarded`` to each trajectory's run (once, however often it is discarded)."""

    async def record(discarded: list[Discarded]) -> None:
        for item in discarded:
            event = item.event
            await event_log.append(RolloutDiscarded(
                event_id=derive_id(event.event_id, "trainer", "discarded"), run_id=event.run_id,
                occurred_at=datetime.now(UTC), causation_id=event.event_id,
                correlation_id=event.correlation_id or event.event_id, trajectory_id=event.event_id,
                group_id=event.group_id, reason=item.reason, policy_version=item.version,
                trainer_version=item.trainer_version,
            ))  # fmt: skip

    return record
