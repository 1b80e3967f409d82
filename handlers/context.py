"""The one typed context handed to every handler, with deterministic ids and time."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from events.base import Event
from events.run import RunStarted

E = TypeVar("E", bound=Event)

_ID_NAMESPACE = uuid.UUID("8f0c2d61-5b8e-4f51-9b77-6f3d8a7e2c10")


_NAMESPACE_BYTES = _ID_NAMESPACE.bytes


def derive_id(cause_id: str, handler: str, label: str) -> str:
    """A stable id for output ``label`` of ``handler`` answering event ``cause_id``.

    The text of ``uuid.uuid5(_ID_NAMESPACE, "cause/handler/label")``, built without the
    UUID object (the dispatcher derives several ids per event; recorded logs hold these).
    """
    digest = bytearray(hashlib.sha1(_NAMESPACE_BYTES + f"{cause_id}/{handler}/{label}".encode()).digest()[:16])
    digest[6] = digest[6] & 0x0F | 0x50  # version 5
    digest[8] = digest[8] & 0x3F | 0x80  # RFC 4122 variant
    text = digest.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


@dataclass(frozen=True)
class Services:
    """Ports effectors use. Deciders get an empty instance and must not need it."""

    models: Any = None
    """A :class:`handlers.ports.ModelRouter`."""
    tools: Any = None
    """A :class:`handlers.ports.ToolRunner`."""
    grader: Any = None
    """A :class:`handlers.ports.AnswerGrader`."""
    settings_for_run: Any = None
    """``(overrides: dict) -> dict``: the engine's run settings with a run's overrides applied."""


@dataclass(frozen=True)
class HandlerContext:
    """Everything a handler may read, plus factories for its output events.

    ``history`` is the run's events up to and including ``event`` (stream order),
    so deciders are pure functions of the log.
    """

    event: Event
    handler: str
    history: Sequence[Event] = ()
    services: Services = field(default_factory=Services)
    wall_clock: bool = False
    """Effectors stamp outputs with the wall clock; deciders reuse the input's time."""

    def new(self, event_type: type[E], label: str, **fields: Any) -> E:
        """Build an output event answering the input, with a deterministic id."""
        cause = self.event
        occurred_at = datetime.now(UTC) if self.wall_clock else cause.occurred_at
        return event_type(
            event_id=derive_id(cause.event_id, self.handler, label),
            run_id=fields.pop("run_id", cause.run_id),
            occurred_at=occurred_at,
            causation_id=cause.event_id,
            correlation_id=cause.correlation_id or cause.event_id,
            **fields,
        )

    def new_id(self, label: str) -> str:
        """A deterministic id for something other than an event (call ids...)."""
        return derive_id(self.event.event_id, self.handler, f"id:{label}")

    def settings(self) -> dict[str, Any]:
        """The run settings recorded in ``RunStarted`` (empty before it)."""
        for event in self.history:
            if isinstance(event, RunStarted):
                return event.settings
        return {}
