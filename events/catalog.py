"""The one list of event types: the tagged union the codec decodes."""

from __future__ import annotations

from typing import Final, Union

from events.base import Event, tag_of
from events.episode import AnswerGraded, AnswerRegraded, EpisodeEnded, TrajectorySealed
from events.evolve import (
    MemoryWritten,
    RoundCompleted,
    RoundStarted,
    VerdictReached,
    VerifierReported,
)
from events.model import ModelCallFailed, ModelCallRequested, ModelResponded
from events.policy import (
    PolicyActivated,
    PolicyUpdated,
    PolicyUpdateFailed,
    RolloutDiscarded,
    RolloutTrained,
)
from events.run import (
    EventRejected,
    HandlerFailed,
    ProblemSubmitted,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunStarted,
)
from events.tool import ActionParsed, ToolCallRequested, ToolFailed, ToolReturned

EVENT_TYPES: list[type[Event]] = [
    ProblemSubmitted,
    RunStarted,
    RunCompleted,
    RunCancelled,
    RunFailed,
    EventRejected,
    HandlerFailed,
    ModelCallRequested,
    ModelResponded,
    ModelCallFailed,
    ActionParsed,
    ToolCallRequested,
    ToolReturned,
    ToolFailed,
    AnswerGraded,
    EpisodeEnded,
    TrajectorySealed,
    RoundStarted,
    VerifierReported,
    VerdictReached,
    MemoryWritten,
    RoundCompleted,
    PolicyUpdated,
    PolicyActivated,
    PolicyUpdateFailed,
    RolloutDiscarded,
    AnswerRegraded,
    RolloutTrained,
]
"""Every event type; later modules append theirs through :func:`register`."""

TYPES_BY_TAG: Final[dict[str, type[Event]]] = {}


def register(*event_types: type[Event]) -> None:
    """Add event types to the union (call at import time of their module only)."""
    for event_type in event_types:
        tag = tag_of(event_type)
        known = TYPES_BY_TAG.get(tag)
        if known is not None and known is not event_type:
            msg = f"event tag {tag!r} is used by both {known.__name__} and {event_type.__name__}"
            raise ValueError(msg)
        TYPES_BY_TAG[tag] = event_type
        if event_type not in EVENT_TYPES:
            EVENT_TYPES.append(event_type)


register(*EVENT_TYPES)


def any_event_type() -> object:
    """The current tagged union of all registered event types."""
    return Union[tuple(EVENT_TYPES)]  # noqa: UP007 - a runtime union of a dynamic tuple
