"""The base event every fact in the log derives from."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Final

import msgspec

SCHEMA_VERSION: Final = 1
"""Current schema version written into new events."""

RUN_ID_PATTERN: Final = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
"""A run id is one NATS subject token: no dots, spaces or wildcards."""


class Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """An immutable fact about a run. Subclasses set an explicit, stable ``tag``."""

    event_id: str
    """Unique id; also the ``Nats-Msg-Id`` that deduplicates publishes."""
    run_id: str
    """The run this event belongs to (one subject token)."""
    occurred_at: datetime
    """When it happened (UTC)."""
    causation_id: str | None = None
    """The event this one answers, if any."""
    correlation_id: str | None = None
    """The event that started the chain (usually the run's submission)."""
    schema_version: int = SCHEMA_VERSION
    """Version of this event's schema, for upcasting older records."""


def tag_of(event_type: type[Event]) -> str:
    """The wire tag of an event class (kept per class: readers and workers ask for every event)."""
    tag = _TAGS.get(event_type)
    if tag is None:
        tag = _TAGS[event_type] = str(event_type.__struct_config__.tag)
    return tag


_TAGS: dict[type, str] = {}


def is_valid_run_id(run_id: str) -> bool:
    """True when ``run_id`` can be used as a subject token."""
    return bool(RUN_ID_PATTERN.match(run_id))
