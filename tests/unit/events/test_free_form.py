"""Which schemas let a body nest without bound (events.free_form)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from events import EVENT_TYPES, ProblemSubmitted, RunStarted, tag_of
from events.free_form import nests_freely


class Leaf(msgspec.Struct):
    name: str
    count: int
    scores: list[float]
    tags: dict[str, str]


class HoldsLeaves(msgspec.Struct):
    leaves: list[Leaf]
    maybe: Leaf | None = None


class HoldsAny(msgspec.Struct):
    extra: dict[str, Any]


class DeepInside(msgspec.Struct):
    inner: list[HoldsAny]


class Tree(msgspec.Struct):
    children: list[Tree]


class HoldsRaw(msgspec.Struct):
    payload: msgspec.Raw


@pytest.mark.parametrize(("schema", "free"), [
    (Leaf, False), (HoldsLeaves, False), (HoldsAny, True), (DeepInside, True), (Tree, True), (HoldsRaw, True),
])
def test_a_schema_nests_freely_exactly_when_some_field_can_hold_any_depth(schema, free) -> None:
    """Scalars and containers of fixed schemas are bounded; Any, raw JSON and recursion are not."""
    assert nests_freely(schema) is free


def test_the_events_with_free_form_fields_are_recognised() -> None:
    """A submission's metadata and config and a run's settings are free-form."""
    assert nests_freely(ProblemSubmitted) and nests_freely(RunStarted)


@pytest.mark.parametrize("event_type", EVENT_TYPES, ids=tag_of)
def test_every_event_type_gets_a_verdict(event_type) -> None:
    """The schema walk understands every event type (no crash on any field type)."""
    assert nests_freely(event_type) in (True, False)
