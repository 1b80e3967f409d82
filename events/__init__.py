"""The vocabulary: every fact the engine records, as frozen msgspec structs.

Imports only the standard library and msgspec; no I/O.
"""

from events.base import SCHEMA_VERSION, Event, is_valid_run_id, tag_of
from events.catalog import EVENT_TYPES, TYPES_BY_TAG, any_event_type, register
from events.codec import DecodeError, UnknownEvent, decode, encode, from_builtins, to_builtins
from events.episode import AnswerGraded, AnswerRegraded, EpisodeEnded, TrajectorySealed, Turn
from events.evolve import (
    MemoryEntry,
    MemoryWritten,
    RoundCompleted,
    RoundStarted,
    VerdictReached,
    VerifierReported,
)
from events.model import (
    ChatMessage,
    ModelCallFailed,
    ModelCallRequested,
    ModelResponded,
    SamplingParams,
    TokenUsage,
)
from events.record import Recorded
from events.run import (
    EventRejected,
    HandlerFailed,
    ProblemSubmitted,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunStarted,
)
from events.subjects import subject_for
from events.tool import ActionParsed, ToolCallRequested, ToolFailed, ToolReturned

__all__ = [
    "EVENT_TYPES",
    "SCHEMA_VERSION",
    "TYPES_BY_TAG",
    "ActionParsed",
    "AnswerGraded",
    "AnswerRegraded",
    "ChatMessage",
    "DecodeError",
    "EpisodeEnded",
    "Event",
    "EventRejected",
    "HandlerFailed",
    "MemoryEntry",
    "MemoryWritten",
    "ModelCallFailed",
    "ModelCallRequested",
    "ModelResponded",
    "ProblemSubmitted",
    "Recorded",
    "RoundCompleted",
    "RoundStarted",
    "RunCancelled",
    "RunCompleted",
    "RunFailed",
    "RunStarted",
    "SamplingParams",
    "TokenUsage",
    "ToolCallRequested",
    "ToolFailed",
    "ToolReturned",
    "TrajectorySealed",
    "Turn",
    "UnknownEvent",
    "VerdictReached",
    "VerifierReported",
    "any_event_type",
    "decode",
    "encode",
    "from_builtins",
    "is_valid_run_id",
    "register",
    "subject_for",
    "tag_of",
    "to_builtins",
]
