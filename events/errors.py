"""Errors of the events layer: EventError is the root.

EventError
 +-- DecodeError   bytes that are not a valid event of a known type (also a ValueError)
"""

from __future__ import annotations


class EventError(Exception):
    """Something is wrong with an event's bytes or shape."""
