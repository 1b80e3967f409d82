"""The one typed context handed to every handler, with deterministic ids and time."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any, TypeVar

from events.base import Event
from events.run import RunStarted
from handlers.catalog import Catalog, builtin_catalog
from handlers.ports import AnswerGrader, ModelRouter, ToolRunner
from handlers.run_settings import RunSettings, RunSettingsError, run_settings_of

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


SettingsForRun = Callable[[dict[str, object]], dict[str, object]]
"""``(overrides) -> settings``: the engine's run settings with a run's overrides applied
(plain JSON values both). Raises ``ValueError`` for overrides it refuses."""


@dataclass(frozen=True)
class Services:
    """What the composition root hands to handlers.

    Effectors use the ports; deciders get only the catalog (the ports are ``None`` for
    them), so a decision depends on nothing but the log and the catalog.
    """

    models: ModelRouter | None = None
    tools: ToolRunner | None = None
    grader: AnswerGrader | None = None
    settings_for_run: SettingsForRun | None = None
    catalog: Catalog = field(default_factory=builtin_catalog)
    """Domains, graders, rewards and tools by name: the built-ins and the loaded plugins."""

    def for_deciders(self) -> Services:
        """The same catalog without the ports."""
        return Services(catalog=self.catalog)


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
    typed_settings: RunSettings | None = None
    """The run's recorded settings, typed: decoded once, where the worker's history cache
    first saw the run's ``run.started`` (``None``: :meth:`run_settings` decodes them from
    ``history`` on first use)."""

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

    @property
    def catalog(self) -> Catalog:
        return self.services.catalog

    def run_settings(self) -> RunSettings:
        """The run settings recorded in ``RunStarted``, typed (the defaults before it).

        Raises:
            RunSettingsError: a recorded value has the wrong type; the message names the run and key.
        """
        return self.typed_settings if self.typed_settings is not None else self._decoded_settings

    @cached_property
    def _decoded_settings(self) -> RunSettings:
        """The settings of the ``RunStarted`` in ``history`` (or the event itself), decoded
        once per context (an error is raised again on each use, never kept)."""
        started = next((event for event in self.history if isinstance(event, RunStarted)), None)
        if started is None and isinstance(self.event, RunStarted):
            started = self.event
        if started is None:
            return _NO_SETTINGS
        try:
            return run_settings_of(started.settings)
        except RunSettingsError as exc:
            raise RunSettingsError(f"run {self.event.run_id}: {exc}") from exc


_NO_SETTINGS = RunSettings()
