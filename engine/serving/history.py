"""Reading a policy's version history: pure folds over its events."""

from __future__ import annotations

from collections.abc import Sequence

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
