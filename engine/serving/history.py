"""Reading a policy's version history: pure folds over its events, and a follower that
reads only what is new at each look (a long training run's history grows by three events
a step, so re-reading it whole at every look would cost more each step)."""

from __future__ import annotations

from collections.abc import Sequence

from engine.eventlog.port import EventLog
from events.base import Event
from events.policy import PolicyActivated, PolicyUpdated, PolicyUpdateFailed

Outcome = PolicyActivated | PolicyUpdateFailed


def active_in(history: Sequence[Event]) -> PolicyActivated | None:
    """The newest activation in a policy's history (what is served now)."""
    activations = [e for e in history if isinstance(e, PolicyActivated)]
    return max(activations, key=lambda e: e.version) if activations else None


def outcome_of(history: Sequence[Event], update: PolicyUpdated) -> Outcome | None:
    """The serving side's recorded answer to ``update``, if there is one yet."""
    for event in history:
        if isinstance(event, PolicyActivated | PolicyUpdateFailed) and event.causation_id == update.event_id:
            return event
    return None


def update_with_version(history: Sequence[Event], version: int) -> PolicyUpdated | None:
    return next((e for e in history if isinstance(e, PolicyUpdated) and e.version == version), None)


class PolicyHistory:
    """The events of one policy's run read so far; :meth:`refresh` reads the ones after them."""

    def __init__(self, event_log: EventLog, run_id: str) -> None:
        self.log = event_log
        self.run_id = run_id
        self.events: list[Event] = []
        self._seq = 0

    async def refresh(self) -> list[Event]:
        """Read the events appended since the last look; return them (also kept in :attr:`events`)."""
        fresh = []
        for record in await self.log.read_run(self.run_id, after_seq=self._seq):
            self._seq = record.seq
            fresh.append(record.event)
        self.events.extend(fresh)
        return fresh
