"""Memory projections: pure folds over MemoryWritten, one retrieval rule per kind."""

from __future__ import annotations

import math
import uuid
from datetime import UTC, datetime

import pytest

from events import MemoryEntry, MemoryWritten, RunStarted
from handlers.projections import memory
from handlers.projections.memory import memory_state, retrieve

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def written(
    solution: str,
    feedback: str = "ok",
    score: float | None = 1.0,
    *,
    entry_id: str | None = None,
    name: str = "solutions",
) -> MemoryWritten:
    entry = MemoryEntry(
        entry_id=entry_id or uuid.uuid4().hex,
        round=0,
        solution=solution,
        feedback=feedback,
        score=score,
        complexity=len(solution),
    )
    return MemoryWritten(
        event_id=uuid.uuid4().hex, run_id="r", occurred_at=NOW, memory=name, entry=entry
    )


def solutions(entries: list) -> list[str]:
    return [e.solution for e in entries]


def test_simple_memory_keeps_the_last_entries_in_order() -> None:
    """Simple memory returns the last N entries, oldest first."""
    state = memory_state([written(s) for s in ["a", "b", "c", "d"]])
    assert solutions(retrieve(state, "simple", 2)) == ["c", "d"]
    assert len(state.view("simple")) == 4


def test_score_memory_orders_by_score_and_keeps_arrival_order_on_ties() -> None:
    """Highest score first; equal scores keep arrival order; a missing score ranks last."""
    state = memory_state(
        [
            written("a", score=0),
            written("b", score=None),
            written("c", score=1),
            written("d", score=1),
        ]
    )
    assert solutions(retrieve(state, "score", 4)) == ["c", "d", "a", "b"]


def test_ndimensional_matches_the_reference_example_with_a_working_len() -> None:
    """Short correct solutions rank first; a duplicate is dropped; len counts stored entries."""
    events = [
        written("long solution xxxxxxxxxx", "rep1 \\boxed{0}", 0),
        written("short", "rep2 \\boxed{1}", 1),
        written("medium sol", "rep3 \\boxed{1}", 1),
        written("short", "rep2 \\boxed{1}", 1),
    ]
    state = memory_state(events)
    assert solutions(retrieve(state, "ndimensional", 3)) == [
        "short",
        "medium sol",
        "long solution xxxxxxxxxx",
    ]
    assert len(state.view("ndimensional")) == 3


def test_invalid_entry_is_not_stored_and_does_not_block_a_valid_one() -> None:
    """The de-duplication key is added only after validation."""
    state = memory_state([written("x", score=math.nan), written("x", score=1.0)])
    view = state.view("ndimensional")
    assert len(view) == 1 and view.entries[0].score == 1.0


def test_random_strategy_is_deterministic_per_seed() -> None:
    """The random strategy is a pure function of its seed, never of global state."""
    state = memory_state([written(f"s{i}") for i in range(10)])
    first = solutions(retrieve(state, "ndimensional", 4, strategy="random", seed="run/b/1"))
    again = solutions(retrieve(state, "ndimensional", 4, strategy="random", seed="run/b/1"))
    other = solutions(retrieve(state, "ndimensional", 10, strategy="random", seed="run/b/2"))
    assert first == again and len(set(first)) == 4
    assert sorted(other) == sorted(f"s{i}" for i in range(10))


def test_unknown_strategy_and_kind_are_errors() -> None:
    """A typo in a strategy or a memory kind is reported, not ignored."""
    state = memory_state([written("a")])
    with pytest.raises(ValueError, match="strategy"):
        retrieve(state, "ndimensional", 1, strategy="best")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="memory type"):
        retrieve(state, "fancy", 1)  # type: ignore[arg-type]


def test_search_memory_finds_the_most_similar_entry() -> None:
    """Lexical retrieval ranks the entry sharing the query's terms first."""
    state = memory_state(
        [
            written("modular arithmetic with residues mod 7"),
            written("triangle area by heron"),
            written("count lattice paths"),
        ]
    )
    assert solutions(retrieve(state, "search", 1, query="area of a triangle"))[0].startswith(
        "triangle"
    )


def test_other_events_and_memories_are_separate() -> None:
    """Only MemoryWritten changes memory, and each named memory is its own store."""
    started = RunStarted(event_id="e", run_id="r", occurred_at=NOW, workflow="evolve")
    state = memory_state([started, written("a", name="notes"), written("b")])
    assert solutions(retrieve(state, "simple", 5)) == ["b"]
    assert solutions(retrieve(state, "simple", 5, memory="notes")) == ["a"]
    assert memory.evolve(state, started) is state


def test_rebuilding_from_a_prefix_equals_a_full_fold() -> None:
    """Folding a prefix, then the rest, gives the same state as folding everything."""
    events = [written(f"s{i}", score=i % 2) for i in range(6)]
    state = memory_state(events[:3])
    for event in events[3:]:
        state = memory.evolve(state, event)
    assert state == memory_state(events)


def test_ndimensional_tie_puts_the_shorter_solution_first() -> None:
    """Equal rank sums rank as the reference ranks them: shorter solution first (spec 4.4)."""
    # "approved but long" ranks 0 + 1, "rejected but short" ranks 1 + 0: a tie, the short one first
    events = [written("approved but long", score=1), written("short", score=0)]
    assert solutions(retrieve(memory_state(events), "ndimensional", 2)) == [
        "short",
        "approved but long",
    ]


def test_ndimensional_tie_of_equal_lengths_keeps_arrival_order() -> None:
    """Same rank sum and same length: the earlier entry first."""
    events = [written("bbbb", "x", score=1), written("aaaa", "y", score=1)]
    assert solutions(retrieve(memory_state(events), "ndimensional", 2)) == ["bbbb", "aaaa"]
