"""What an event looks like on the wire when it differs from its form in memory.

Two events record prompts by their changes (:mod:`events.text_delta`) to keep a run's bytes
linear in its turns:

- ``model.call_requested`` with a ``prompt_delta`` is written without its ``messages``: the
  delta's base is an earlier event of the run, so readers resolve it from the run's history
  (the episode projection does), never from the event alone.
- ``trajectory.sealed`` writes each turn's prompt after the first as a delta of the turn
  before it. The event holds its own bases, so decoding restores every prompt whole and no
  reader ever sees the compact form.

Both directions are pure and deterministic: encoding the same event always gives the same
bytes, which replay verification relies on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from events.base import Event
from events.episode import TrajectorySealed, Turn
from events.model import ChatMessage, ModelCallRequested
from events.text_delta import delta_messages, resolve_messages


def to_wire(event: Event) -> Event:
    """The form of ``event`` to encode (``event`` itself for most types)."""
    compact = _TO_WIRE.get(type(event))
    return event if compact is None else compact(event)


RESTORED_ON_READ: frozenset[type] = frozenset({TrajectorySealed})
"""The types :func:`from_wire` may change; it hands back any other event as it is."""


def from_wire(event: Any) -> Any:
    """``event`` as readers use it, from its decoded wire form.

    Raises:
        events.text_delta.DeltaError: a sealed turn's delta does not resolve against the turn before.
    """
    if type(event) is TrajectorySealed and any(turn.prompt_delta is not None for turn in event.turns):
        return msgspec.structs.replace(event, turns=_whole_turns(event.turns))
    return event


def _request_to_wire(event: ModelCallRequested) -> ModelCallRequested:
    if event.prompt_delta is None or not event.messages:
        return event
    return msgspec.structs.replace(event, messages=[])


def _sealed_to_wire(event: TrajectorySealed) -> TrajectorySealed:
    if len(event.turns) < 2:
        return event
    turns = [event.turns[0]]
    for before, turn in zip(event.turns, event.turns[1:], strict=False):
        delta = delta_messages(before.prompt, turn.prompt) if turn.prompt_delta is None else None
        turns.append(turn if delta is None else msgspec.structs.replace(turn, prompt=[], prompt_delta=delta))
    return msgspec.structs.replace(event, turns=turns)


def _whole_turns(turns: list[Turn]) -> list[Turn]:
    whole: list[Turn] = []
    before: list[ChatMessage] = []
    for turn in turns:
        if turn.prompt_delta is not None:
            turn = msgspec.structs.replace(turn, prompt=resolve_messages(before, turn.prompt_delta), prompt_delta=None)
        whole.append(turn)
        before = turn.prompt
    return whole


_TO_WIRE: dict[type, Callable[[Any], Event]] = {
    ModelCallRequested: _request_to_wire,
    TrajectorySealed: _sealed_to_wire,
}
