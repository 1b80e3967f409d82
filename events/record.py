"""An event as stored: its stream sequence and subject."""

from __future__ import annotations

import msgspec

from events.base import Event


class Recorded(msgspec.Struct, frozen=True):
    """An event read back from the log."""

    seq: int
    """Stream sequence (global order across runs)."""
    subject: str
    event: Event


class Unreadable(msgspec.Struct, frozen=True, omit_defaults=True):
    """A stored message readers skip: it cannot be read as an event of its own subject."""

    seq: int
    subject: str
    reason: str
    """One line: why (undecodable, its offloaded body is gone, body and subject disagree)."""
    lost: bool = False
    """An engine-written event (it carries a message id) whose offloaded body is gone for good."""
    excerpt: str = ""
    """The stored bytes' start as text (:func:`excerpt_of`): what a rejection quotes."""


EXCERPT_BYTES = 200


def excerpt_of(data: bytes) -> str:
    """The first ``EXCERPT_BYTES`` of a stored message, as text (undecodable bytes replaced)."""
    return data[:EXCERPT_BYTES].decode("utf-8", errors="replace")
