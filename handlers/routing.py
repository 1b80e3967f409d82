"""What a route is: a handler and the event type it reacts to (the table is in handlers/routes.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from events.base import Event
from events.run import ProblemSubmitted
from handlers.context import HandlerContext

Handler = Callable[[Any, HandlerContext], Awaitable[Sequence[Event]]]
"""Takes the route's own event type (``Any`` here: a callable of a narrower event is not a
callable of every event, and each route pairs a handler with exactly its type)."""


@dataclass(frozen=True)
class Route:
    """``handler`` reacts to ``event_type``.

    ``kind="decide"``: pure, re-run by replay verification, reads the run's history.
    ``kind="effect"``: performs exactly one model or tool call; never re-run by replay.
    """

    event_type: type[Event]
    handler: Handler
    kind: Literal["decide", "effect"]
    name: str
    when: Callable[[Any], bool] | None = None
    """A cheap test of the event alone. Where it is false the handler returns nothing, so
    workers skip the route without reading history or touching the handled marks.
    Replay verification ignores it and runs every decider, which catches a test that
    wrongly skips."""

    def applies_to(self, event: Event) -> bool:
        return self.when is None or self.when(event)

    @property
    def needs_history(self) -> bool:
        return self.kind == "decide"


def routes_for(table: Sequence[Route], event_type: type[Event]) -> list[Route]:
    """Routes whose event type is exactly ``event_type``."""
    return [route for route in table if route.event_type is event_type]


def delivered_types(table: Sequence[Route]) -> frozenset[type[Event]]:
    """The event types a worker must receive by delivery.

    An effect (a model, tool or grading call) runs on its event's delivery, and a
    submission comes from outside the engine. Every other routed event is an output of
    a handler, whose worker takes the decisions below it before acknowledging its input
    (``engine.runtime.dispatcher``), so delivering it would only repeat them.
    """
    return frozenset({route.event_type for route in table if route.kind == "effect"} | {ProblemSubmitted})

