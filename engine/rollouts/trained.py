"""Records what the trainer trained: ``rollout.trained`` on each trajectory's own run."""

from __future__ import annotations

from datetime import UTC, datetime

from engine.eventlog.port import EventLog
from events.policy import RolloutTrained
from handlers.context import derive_id
from replay.training.subscription import Trained, TrainRecorder


def train_recorder(event_log: EventLog, *, trainer: str) -> TrainRecorder:
    """An ``on_commit`` for :class:`replay.training.RolloutSubscription` that appends
    ``rollout.trained`` to each trajectory's run (once per trainer and step, however often
    the commit is retried)."""

    async def record(trained: list[Trained]) -> None:
        now = datetime.now(UTC)
        await event_log.append_many([
            RolloutTrained(
                event_id=derive_id(item.event.event_id, trainer, f"trained-{item.step}"), run_id=item.event.run_id,
                occurred_at=now, causation_id=item.event.event_id,
                correlation_id=item.event.correlation_id or item.event.event_id,
                trajectory_id=item.event.event_id, group_id=item.event.group_id, trainer=trainer, step=item.step,
                policy_version=item.version, trainer_version=item.trainer_version, reward=item.reward,
                reward_source=item.reward_source, episode=item.event.episode, role=item.event.role,
            )
            for item in trained
        ])  # fmt: skip

    return record
