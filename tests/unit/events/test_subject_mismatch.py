"""A body's run and type checked against its subject: the quick path answers as the full reading does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.testing.event_builders import started, submitted
from events.base import tag_of
from events.subjects import parse_subject, subject_mismatch


def files_under_its_own_run_and_type(subject: str, event) -> bool:
    """The rule read plainly: a run subject must name the body's run and type (others pass)."""
    parsed = parse_subject(subject)
    return parsed is None or parsed == (event.run_id, tag_of(type(event)))


_tokens = st.sampled_from(["r-1", "r.1", "", "a.b.c", "apollo", "run", "problem", "submitted", "run.started", ">", "*"])


@settings(max_examples=2000, deadline=None)
@given(run_id=_tokens, subject_parts=st.lists(_tokens, max_size=6), first=st.booleans())
def test_every_subject_and_body_get_the_full_readings_verdict(
    run_id: str, subject_parts: list[str], first: bool
) -> None:
    """Generated subjects (dotted, empty, foreign run ids, other types) pass only naming the body's run and type."""
    event = submitted(run_id) if first else started(run_id)
    candidates = [".".join(subject_parts), f"apollo.run.{run_id}.{tag_of(type(event))}",
                  f"apollo.run.{'.'.join(subject_parts)}"]
    for subject in candidates:
        reason = subject_mismatch(subject, event)
        assert (reason is None) == files_under_its_own_run_and_type(subject, event)
        if reason is not None:  # the reason names what disagrees: the run first, else the type
            subject_run, subject_tag = parse_subject(subject)
            what, named = ("run_id", subject_run) if subject_run != event.run_id else ("type", subject_tag)
            assert reason.startswith(f"the body's {what} ") and repr(named) in reason


def test_a_dotted_run_id_on_its_own_subject_is_still_a_mismatch() -> None:
    """A body naming run ``a.b`` on ``apollo.run.a.b.run.started`` is filed under run ``a``: refused."""
    event = started("a.b")
    assert subject_mismatch("apollo.run.a.b.run.started", event) is not None
