"""A projection's declared event types: a bulk rebuild folds only those, so on any other
event its ``evolve`` must hand back the very state it was given."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from events import EVENT_TYPES, tag_of
from handlers.projections.registry import projections
from replay.rebuild import fold, rebuild_run, rebuild_stream
from tests.replay.support import golden as history
from tests.support.event_strategies import WIRE_ONLY, register_event_strategies

HISTORIES = ("good_code_then_answer", "good_invalid_code_answer", "edited_prompt")

register_event_strategies()

DECLARING = [p for p in projections().values() if p.event_types is not None]


def test_the_registered_projections_declare_their_event_types() -> None:
    """Both built-in projections say what they fold, so a rebuild skips the rest."""
    assert {p.name for p in DECLARING} >= {"episode", "memory"}


UNDECLARED = [(p, t) for p in DECLARING for t in EVENT_TYPES if not p.folds(t)]
"""Every (projection, event type) pair a bulk rebuild skips."""


@pytest.mark.parametrize(("projection", "event_type"), UNDECLARED, ids=[f"{p.name}-{tag_of(t)}" for p, t in UNDECLARED])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_an_event_of_an_undeclared_type_leaves_the_state_as_it_was(projection, event_type, data) -> None:
    """Any event of a type the projection does not declare returns the state object itself,
    whether the state is fresh or folded from a recorded run."""
    event = data.draw(st.builds(event_type, **WIRE_ONLY.get(event_type, {})))
    for state in (projection.initial(), fold(projection, [r.event for r in history(HISTORIES[0])])):
        assert projection.evolve(state, event) is state


@pytest.mark.parametrize("name", HISTORIES)
async def test_a_bulk_rebuild_gives_the_states_of_a_full_fold(name) -> None:
    """Skipping undeclared types changes nothing: the stream rebuild equals a fold of every event."""
    records = history(name)

    async def stream():
        for record in records:
            yield record

    rebuilt = await rebuild_stream(stream())
    assert rebuilt == {records[0].event.run_id: rebuild_run(records)}

