"""The codec's fast path hands every event of a type outside ``RESTORED_ON_READ`` to readers
as decoded, without asking :func:`events.wire_form.from_wire`; so ``from_wire`` must hand
back each such event itself, or a type added to it would silently be skipped."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from events import EVENT_TYPES, tag_of
from events.codec import decode, encode
from events.wire_form import RESTORED_ON_READ, from_wire
from tests.support.event_strategies import WIRE_ONLY, register_event_strategies

register_event_strategies()

PLAIN = [t for t in EVENT_TYPES if t not in RESTORED_ON_READ]


@pytest.mark.parametrize("event_type", PLAIN, ids=[tag_of(t) for t in PLAIN])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_from_wire_hands_back_any_event_of_a_type_not_restored_on_read(event_type, data) -> None:
    """Drawn in memory or decoded from its wire form, an event outside the restored types
    comes back from ``from_wire`` as the very same object."""
    event = data.draw(st.builds(event_type, **WIRE_ONLY.get(event_type, {})))
    assert from_wire(event) is event
    wire = decode(encode(event))
    assert from_wire(wire) is wire


def test_the_restored_types_are_event_types_with_a_wire_form() -> None:
    """Every type the fast path sends through ``from_wire`` is a registered event type."""
    assert set(EVENT_TYPES) >= RESTORED_ON_READ
