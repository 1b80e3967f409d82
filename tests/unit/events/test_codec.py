"""Every event type survives encode/decode; tags are unique, stable and frozen."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from events import EVENT_TYPES, DecodeError, UnknownEvent, decode, encode, tag_of
from events.subjects import parse_subject, subject_for
from tests.support.event_strategies import WIRE_ONLY, register_event_strategies

KNOWN_TAGS = {
    "problem.submitted", "run.started", "run.completed", "run.failed", "event.rejected",
    "handler.failed", "model.call_requested", "model.responded", "model.call_failed",
    "action.parsed", "tool.call_requested", "tool.returned", "tool.failed", "answer.graded",
    "episode.ended", "trajectory.sealed",
}
"""Released tags never change; new event types only add to this set."""

register_event_strategies()
run_ids = st.from_regex(r"\A[A-Za-z0-9_-]{1,40}\Z")


@pytest.mark.parametrize("event_type", EVENT_TYPES, ids=lambda t: tag_of(t))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_every_event_type_round_trips(event_type, data) -> None:
    """encode -> decode gives back an equal event for any field values."""
    event = data.draw(st.builds(event_type, run_id=run_ids, **WIRE_ONLY.get(event_type, {})))
    assert decode(encode(event)) == event


def test_released_tags_are_still_present_and_unique() -> None:
    """No released tag disappears and no two types share one."""
    tags = [tag_of(t) for t in EVENT_TYPES]
    assert len(tags) == len(set(tags))
    assert set(tags) >= KNOWN_TAGS


@pytest.mark.parametrize("event_type", EVENT_TYPES, ids=lambda t: tag_of(t))
def test_events_are_frozen_and_keyword_only(event_type) -> None:
    """Events are immutable and carry the common envelope fields."""
    assert event_type.__struct_config__.frozen
    with pytest.raises(TypeError):
        event_type("positional-id")
    for field in ("event_id", "run_id", "occurred_at", "causation_id", "correlation_id", "schema_version"):
        assert field in event_type.__struct_fields__


def test_unknown_tag_decodes_to_unknown_event() -> None:
    """A tag from a newer version is tolerated, not an error."""
    decoded = decode(b'{"type": "from.the.future", "run_id": "r", "event_id": "e"}')
    assert isinstance(decoded, UnknownEvent)
    assert (decoded.tag, decoded.run_id, decoded.event_id) == ("from.the.future", "r", "e")


@pytest.mark.parametrize("payload", [b"", b"null", b"[]", b"{", b'{"type": 3}', b'"text"', b"\xff"])
def test_garbage_bytes_raise_a_decode_error(payload: bytes) -> None:
    """Anything that is not an event object raises DecodeError with a reason."""
    with pytest.raises(DecodeError):
        decode(payload)


def test_subject_maps_tag_dots_to_tokens() -> None:
    """A run's events live under apollo.run.<run_id>.<tag tokens>."""
    from engine.testing.event_builders import submitted

    event = submitted("r-42")
    assert subject_for(event) == "apollo.run.r-42.problem.submitted"
    assert parse_subject(subject_for(event)) == ("r-42", "problem.submitted")
    assert parse_subject("other.subject") is None


def test_json_schema_covers_every_event() -> None:
    """`apollo schema` can describe all event types."""
    from events.catalog import any_event_type

    schema = msgspec.json.schema(any_event_type())
    text = msgspec.json.encode(schema).decode()
    for event_type in EVENT_TYPES:
        assert tag_of(event_type) in text
