"""The episode projection folds only what a history adds to the one folded before, with the same result."""

from __future__ import annotations

import msgspec

from engine.testing.recorded_runs import recorded_run, spec_for
from handlers.projections import episode as projection
from handlers.projections.episode import EpisodeState, episode_state, evolve


def _full_fold(events: list, name: str = "main") -> EpisodeState:
    state = EpisodeState(episode=name)
    for event in events:
        state = evolve(state, event)
    return state


def test_every_prefix_of_a_run_folds_to_what_a_full_fold_gives() -> None:
    """Deciding along a 16-turn run (each history one event longer) reuses folds and never differs."""
    events = recorded_run(spec_for(3, turns=16))
    for count in range(1, len(events) + 1):
        assert episode_state(events[:count]) == _full_fold(events[:count])
    assert episode_state(iter(events)) == _full_fold(events)  # any iterable, not only lists


def test_a_history_that_is_not_the_continuation_is_folded_from_the_start() -> None:
    """Shorter, re-decoded or edited histories do not reuse a fold they do not continue."""
    events = recorded_run(spec_for(4, turns=4))
    episode_state(events)
    shorter = events[:-3]
    assert episode_state(shorter) == _full_fold(shorter)
    copies = [msgspec.structs.replace(e) for e in events]  # equal events, other objects (a re-read)
    assert episode_state(copies) == _full_fold(copies)
    edited = [*events[:-1], msgspec.structs.replace(events[-1], event_id="other")]
    assert episode_state(edited) == _full_fold(edited)


def test_other_episodes_of_the_same_history_have_their_own_folds() -> None:
    """The same history asked for two episodes gives each its own state."""
    events = recorded_run(spec_for(6, turns=3))  # a completed run (spec_for cycles through endings)
    main, other = episode_state(events), episode_state(events, "round-1-policy")
    assert main.steps and not other.steps


def test_the_number_of_kept_folds_is_bounded() -> None:
    """Folds of many runs are kept up to FOLDS_KEPT, oldest dropped first."""
    for number in range(projection.FOLDS_KEPT + 10):
        episode_state(recorded_run(spec_for(number, turns=1))[:2])
    assert len(projection._FOLDED) == projection.FOLDS_KEPT
