"""Projection laws, checkpoint encoding, and rebuilt-versus-live comparison."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from events.base import Event
from events.run import EventRejected, HandlerFailed
from handlers.projections.registry import projections
from replay.errors import CheckpointUnusable
from replay.rebuild import (
    check_against_checkpoint,
    decode_checkpoint,
    encode_checkpoint,
    fold,
    load_state,
    rebuild_run,
    state_bytes,
)
from tests.replay.support import golden

HISTORY = golden("good_invalid_code_answer") + golden("good_code_then_answer")[:0]
EVENTS = [r.event for r in HISTORY]


class Foreign(Event, frozen=True, kw_only=True, tag="test.foreign"):
    """An event type no projection knows."""

    note: str = ""


@settings(max_examples=60, deadline=None)
@given(cut=st.integers(min_value=0, max_value=len(EVENTS)))
def test_prefix_rebuild_then_rest_equals_full_rebuild(cut: int) -> None:
    """Folding a prefix, then the rest on top, gives the full rebuild (every projection)."""
    for projection in projections().values():
        partial = fold(projection, EVENTS[:cut])
        assert state_bytes(fold(projection, EVENTS[cut:], partial)) == state_bytes(fold(projection, EVENTS))


@settings(max_examples=60, deadline=None)
@given(cut=st.integers(min_value=0, max_value=len(EVENTS)), note=st.text(max_size=50),
       kind=st.sampled_from(["foreign", "rejected", "handler_failed"]))
def test_unknown_events_leave_state_unchanged(cut: int, note: str, kind: str) -> None:
    """Events a projection does not know never change its state."""
    stray = _stray(kind, note)
    for projection in projections().values():
        state = fold(projection, EVENTS[:cut])
        assert state_bytes(projection.evolve(state, stray)) == state_bytes(state)


@settings(max_examples=30, deadline=None)
@given(cut=st.integers(min_value=0, max_value=len(EVENTS)))
def test_checkpoint_round_trip_restores_the_state(cut: int) -> None:
    """A checkpoint decodes back into a state that folds on exactly like the original."""
    for name, projection in projections().items():
        state = fold(projection, EVENTS[:cut])
        checkpoint = decode_checkpoint(encode_checkpoint("r", name, state, cut))
        assert checkpoint.last_seq == cut
        try:
            restored = load_state(checkpoint, projection)
        except CheckpointUnusable:
            continue  # the projector rebuilds such a run from the log instead
        assert state_bytes(fold(projection, EVENTS[cut:], restored)) == state_bytes(fold(projection, EVENTS))


def test_rebuild_run_folds_every_registered_projection() -> None:
    """rebuild_run returns one state per registered projection, the episode among them."""
    states = rebuild_run(HISTORY)
    assert set(states) == set(projections())
    assert states["episode"].ended is not None and states["episode"].step == 3


def test_matching_checkpoint_is_confirmed() -> None:
    """A checkpoint equal to the rebuild of the same prefix is reported ok."""
    projection = projections()["episode"]
    data = encode_checkpoint("r", "episode", fold(projection, EVENTS[:6]), HISTORY[5].seq)
    check = check_against_checkpoint(HISTORY, projection, data)
    assert check.ok and check.live_seq == HISTORY[5].seq


def test_drifted_checkpoint_is_reported_with_fields() -> None:
    """A checkpoint whose state differs from the rebuild is reported with field paths."""
    projection = projections()["episode"]
    data = encode_checkpoint("r", "episode", fold(projection, EVENTS[:5]), HISTORY[7].seq)
    check = check_against_checkpoint(HISTORY, projection, data)
    assert not check.ok and any(line.startswith("state.steps") for line in check.differences)


def test_garbage_checkpoint_is_a_mismatch_not_a_crash() -> None:
    """Unreadable checkpoint bytes are reported as such."""
    check = check_against_checkpoint(HISTORY, projections()["episode"], b"\x00not json")
    assert not check.ok and "unreadable" in check.differences[0]


def test_missing_checkpoint_is_not_a_failure() -> None:
    """Without a live checkpoint there is nothing to compare."""
    check = check_against_checkpoint(HISTORY, projections()["episode"], None)
    assert check.ok and check.live_seq is None


def _stray(kind: str, note: str) -> Event:
    common = {"event_id": "x", "run_id": HISTORY[0].event.run_id, "occurred_at": datetime.now(UTC)}
    if kind == "foreign":
        return Foreign(note=note, **common)
    if kind == "rejected":
        return EventRejected(subject="apollo.run.x.y", reason=note, **common)
    return HandlerFailed(handler="h", failed_event_id="e", failed_type="t", error=note, deliveries=5, **common)


async def test_stream_rebuild_of_interleaved_runs_equals_each_runs_own_rebuild() -> None:
    """One ordered pass over several interleaved runs gives every run's per-run rebuild."""
    import itertools

    from events.record import Recorded
    from replay.rebuild import rebuild_stream
    from tests.evolve.support import RoleModel, run_evolve, standard_reply

    evolve_events = await run_evolve(RoleModel(standard_reply(answers=("41", "42"))), evolve={"rounds": 2})
    evolve_run = [Recorded(seq, "x", event) for seq, event in enumerate(evolve_events, 1)]
    runs = [golden("good_invalid_code_answer"), golden("good_code_then_answer"), evolve_run]
    interleaved = [r for group in itertools.zip_longest(*runs) for r in group if r is not None]

    async def records():
        for record in interleaved:
            yield record

    rebuilt = await rebuild_stream(records())
    assert set(rebuilt) == {run[0].event.run_id for run in runs}
    for run in runs:
        expected = rebuild_run(run)
        assert {k: state_bytes(v) for k, v in rebuilt[run[0].event.run_id].items()} == {
            k: state_bytes(v) for k, v in expected.items()}
    assert rebuilt["r-evo"]["memory"].memories  # the evolve run wrote memory


async def test_stream_rebuild_restores_the_garbage_collector_even_on_error() -> None:
    """The GC pause of a bulk fold never outlives it, whether it ends or fails."""
    import gc

    import pytest

    from replay.rebuild import rebuild_stream

    async def failing():
        yield HISTORY[0]
        raise OSError("connection lost")

    assert gc.isenabled()
    with pytest.raises(OSError, match="connection lost"):
        await rebuild_stream(failing())
    assert gc.isenabled()
