"""A body's run and type checked against its subject: the quick path answers as the full reading does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.testing.event_builders import started, submitted
from events.base import tag_of
from events.subjects import parse_subject, subject_mismatch


def full_reading(subject: str, event) -> str | None:
    """The rule spelled out: split the subject, compare its run and type with the body's."""
    parsed = parse_subject(subject)
    if parsed is None:
        return None
    run_id, tag = parsed
    if event.run_id != run_id:
        return f"the body's run_id {event.run_id!r} is not the subject's run {run_id!r}"
    body_tag = tag_of(type(event))
    if body_tag != tag:
        return f"the body's type {body_tag!r} is not the subject's {tag!r}"
    return None


_tokens = st.sampled_from(["r-1", "r.1", "", "a.b.c", "apollo", "run", "problem", "submitted", "run.started", ">", "*"])


@settings(max_examples=2000, deadline=None)
@given(run_id=_tokens, subject_parts=st.lists(_tokens, max_size=6), first=st.booleans())
def test_every_subject_and_body_get_the_full_readings_verdict(
    run_id: str, subject_parts: list[str], first: bool
) -> None:
    """Generated subjects (dotted, empty and foreign run ids, other types) get the same verdict either way."""
    event = submitted(run_id) if first else started(run_id)
    candidates = [".".join(subject_parts), f"apollo.run.{run_id}.{tag_of(type(event))}",
                  f"apollo.run.{'.'.join(subject_parts)}"]
    for subject in candidates:
        assert subject_mismatch(subject, event) == full_reading(subject, event)


def test_a_dotted_run_id_on_its_own_subject_is_still_a_mismatch() -> None:
    """A body naming run ``a.b`` on ``apollo.run.a.b.run.started`` is filed under run ``a``: refused."""
    event = started("a.b")
    assert subject_mismatch("apollo.run.a.b.run.started", event) is not None
