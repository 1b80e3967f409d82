"""Reading one stored message back as a record, or saying why it cannot be one.

Every reader of the log (workers' history reads, the CLI, exports) goes through here, so
one bad message is skipped and reported the same way everywhere instead of failing the
read it is part of.
"""

from __future__ import annotations

import structlog

from events.codec import DecodeError, UnknownEvent, decode
from events.record import Recorded, Unreadable, excerpt_of
from events.subjects import subject_mismatch

log = structlog.get_logger("apollo.eventlog")


def record_of(seq: int, subject: str, data: bytes) -> Recorded | Unreadable | None:
    """The record stored at ``seq``; ``None`` for an event type this version does not know."""
    try:
        event = decode(data)
    except DecodeError as exc:
        return Unreadable(seq, subject, str(exc), excerpt=excerpt_of(data))
    if isinstance(event, UnknownEvent):
        return None  # a newer version's event: not ours to read, and not broken
    mismatch = subject_mismatch(subject, event)
    if mismatch is not None:
        return Unreadable(seq, subject, mismatch, excerpt=excerpt_of(data))
    return Recorded(seq, subject, event)


def report_unreadable(found: Unreadable, into: list[Unreadable] | None) -> None:
    """Hand a skipped message to the caller that asked for them, else log it (one line)."""
    if into is not None:
        into.append(found)
    else:
        log.warning("unreadable_record_skipped", seq=found.seq, subject=found.subject, reason=found.reason)
