"""Memories are projections: pure folds over ``MemoryWritten`` events.

Four kinds share one entry type (:class:`events.evolve.MemoryEntry`) and differ in
what they keep and how they retrieve:

* ``simple``: every entry in arrival order; retrieval gives the last ``k``.
* ``score``: entries ordered by score, highest first (ties keep arrival order,
  a missing score ranks last); retrieval gives the first ``k``.
* ``ndimensional``: de-duplicated entries indexed along two dimensions,
  ``performance`` (higher score first) and ``complexity`` (shorter solution first).
  ``min_combined`` ranks by the sum of group ranks across dimensions (a tie goes to
  the shorter solution, as in the reference); ``random``
  draws a deterministic sample seeded by the caller (run, branch, round).
* ``search``: lexical retrieval (TF-IDF cosine) of the entries nearest a query.

Each kind is a frozen state with ``evolve(state, event) -> state``; the module-level
:func:`evolve` keeps all four for every named memory, so the strategy can be chosen
at read time and replay rebuilds the same state from the same events.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from events.base import Event
from events.evolve import MemoryEntry, MemoryWritten

MemoryKind = Literal["simple", "score", "ndimensional", "search"]
Strategy = Literal["min_combined", "random"]
KINDS: Final[tuple[MemoryKind, ...]] = ("simple", "score", "ndimensional", "search")
DIMENSIONS: Final = ("complexity", "performance")
"""The dimensions the reference ranks solutions by."""

NAME: Final = "memory"
"""Name of this projection in the projection registry."""


@dataclass(frozen=True)
class SimpleMemory:
    """Entries in arrival order."""

    entries: tuple[MemoryEntry, ...] = ()

    def __len__(self) -> int:
        return len(self.entries)

    def retrieve(self, k: int) -> list[MemoryEntry]:
        """The last ``k`` entries, oldest first."""
        return list(self.entries[-k:]) if k > 0 else []


@dataclass(frozen=True)
class ScoreMemory:
    """Entries sorted by score, highest first; equal scores keep arrival order."""

    entries: tuple[MemoryEntry, ...] = ()

    def __len__(self) -> int:
        return len(self.entries)

    def retrieve(self, k: int) -> list[MemoryEntry]:
        """The ``k`` best-scored entries."""
        return list(self.entries[:k]) if k > 0 else []


@dataclass(frozen=True)
class NDimensionalMemory:
    """De-duplicated entries with one ordered group list per dimension.

    ``groups[dim]`` holds ``(value, entry indexes)`` sorted by value, highest first;
    entries with equal values share a group, so they share a rank.
    """

    entries: tuple[MemoryEntry, ...] = ()
    keys: frozenset[str] = frozenset()
    groups: Mapping[str, tuple[tuple[float, tuple[int, ...]], ...]] = field(
        default_factory=lambda: {dim: () for dim in DIMENSIONS}
    )

    def __len__(self) -> int:
        return len(self.entries)

    def retrieve(
        self, k: int, strategy: Strategy = "min_combined", seed: str = ""
    ) -> list[MemoryEntry]:
        """``k`` entries by ``strategy``; ``random`` is a pure function of ``seed``."""
        if k <= 0:
            return []
        if strategy == "min_combined":
            return self._min_combined(k)
        if strategy == "random":
            order = sorted(
                range(len(self.entries)),
                key=lambda i: _digest(f"{seed}/{self.entries[i].entry_id}"),
            )
            return [self.entries[i] for i in order[:k]]
        msg = f"unknown retrieval strategy {strategy!r}: use min_combined or random"
        raise ValueError(msg)

    def _min_combined(self, k: int) -> list[MemoryEntry]:
        """Smallest rank sum first; equal sums in the first dimension's order.

        The reference lists candidates by walking the first dimension (``complexity``)
        group by group, then sorts stably by rank sum, so a tie goes to the shorter
        solution (equal lengths: the earlier entry).
        """
        rank_sum = [0] * len(self.entries)
        for dim in DIMENSIONS:
            for rank, (_, members) in enumerate(self.groups[dim]):
                for index in members:
                    rank_sum[index] += rank
        walk = [index for _, members in self.groups[DIMENSIONS[0]] for index in members]
        order = sorted(walk, key=lambda i: rank_sum[i])
        return [self.entries[i] for i in order[:k]]


@dataclass(frozen=True)
class SearchMemory:
    """Entries plus their term counts and the document frequencies of the terms."""

    entries: tuple[MemoryEntry, ...] = ()
    terms: tuple[Mapping[str, int], ...] = ()
    doc_freq: Mapping[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.entries)

    def retrieve(self, k: int, query: str) -> list[MemoryEntry]:
        """The ``k`` entries most similar to ``query`` (ties keep arrival order)."""
        if k <= 0 or not self.entries:
            return []
        query_vector = self._vector(Counter(tokens(query)))
        scores = [_cosine(query_vector, self._vector(counts)) for counts in self.terms]
        order = sorted(range(len(self.entries)), key=lambda i: -scores[i])
        return [self.entries[i] for i in order[:k]]

    def _vector(self, counts: Mapping[str, int]) -> dict[str, float]:
        total = len(self.entries)
        return {
            term: count * (1.0 + math.log((1 + total) / (1 + self.doc_freq.get(term, 0))))
            for term, count in counts.items()
        }


AnyMemory = SimpleMemory | ScoreMemory | NDimensionalMemory | SearchMemory


def evolve_simple(state: SimpleMemory, event: Event) -> SimpleMemory:
    """Append every written entry."""
    if not isinstance(event, MemoryWritten):
        return state
    return replace(state, entries=(*state.entries, event.entry))


def evolve_score(state: ScoreMemory, event: Event) -> ScoreMemory:
    """Insert before the first entry with a strictly lower score."""
    if not isinstance(event, MemoryWritten):
        return state
    value = _score(event.entry)
    entries = list(state.entries)
    at = next((i for i, e in enumerate(entries) if _score(e) < value), len(entries))
    entries.insert(at, event.entry)
    return replace(state, entries=tuple(entries))


def evolve_ndimensional(state: NDimensionalMemory, event: Event) -> NDimensionalMemory:
    """Validate, then de-duplicate, then index the entry along every dimension."""
    if not isinstance(event, MemoryWritten):
        return state
    values = _dimension_values(event.entry)
    if values is None:
        return state  # invalid entries are not stored and do not block a later valid one
    key = dedup_key(event.entry)
    if key in state.keys:
        return state
    index = len(state.entries)
    groups = {dim: _add_to_groups(state.groups[dim], values[dim], index) for dim in DIMENSIONS}
    return NDimensionalMemory(
        entries=(*state.entries, event.entry), keys=state.keys | {key}, groups=groups
    )


def evolve_search(state: SearchMemory, event: Event) -> SearchMemory:
    """Index the entry's solution and feedback terms."""
    if not isinstance(event, MemoryWritten):
        return state
    counts = Counter(tokens(f"{event.entry.solution}\n{event.entry.feedback}"))
    doc_freq = dict(state.doc_freq)
    for term in counts:
        doc_freq[term] = doc_freq.get(term, 0) + 1
    return SearchMemory(
        entries=(*state.entries, event.entry), terms=(*state.terms, dict(counts)), doc_freq=doc_freq
    )


EVOLVERS: Final[Mapping[MemoryKind, Callable[[Any, Event], Any]]] = {
    "simple": evolve_simple,
    "score": evolve_score,
    "ndimensional": evolve_ndimensional,
    "search": evolve_search,
}
EMPTY: Final[Mapping[MemoryKind, Callable[[], Any]]] = {
    "simple": SimpleMemory,
    "score": ScoreMemory,
    "ndimensional": NDimensionalMemory,
    "search": SearchMemory,
}


@dataclass(frozen=True)
class MemoryState:
    """Every named memory of a run, each kept as all four kinds."""

    memories: Mapping[str, Mapping[MemoryKind, AnyMemory]] = field(default_factory=dict)

    def view(self, kind: MemoryKind, memory: str = "solutions") -> AnyMemory:
        """One memory as one kind (empty when nothing was written to it yet)."""
        if kind not in EMPTY:
            msg = f"unknown memory type {kind!r}: use one of {', '.join(KINDS)}"
            raise ValueError(msg)
        return self.memories.get(memory, {}).get(kind) or EMPTY[kind]()


STATE_TYPE: Final = MemoryState


def initial() -> MemoryState:
    """No memory written yet."""
    return MemoryState()


EVENT_TYPES: Final = frozenset({MemoryWritten})
"""The only event type :func:`evolve` changes memory on."""


def evolve(state: MemoryState, event: Event) -> MemoryState:
    """Fold one event; only ``MemoryWritten`` changes memory."""
    if not isinstance(event, MemoryWritten):
        return state
    current = state.memories.get(event.memory) or {kind: EMPTY[kind]() for kind in KINDS}
    updated = {kind: EVOLVERS[kind](current[kind], event) for kind in KINDS}
    return MemoryState(memories={**state.memories, event.memory: updated})


def memory_state(history: Iterable[Event]) -> MemoryState:
    """Fold a whole history."""
    state = initial()
    for event in history:
        state = evolve(state, event)
    return state


def retrieve(
    state: MemoryState,
    kind: MemoryKind,
    k: int,
    *,
    memory: str = "solutions",
    strategy: Strategy = "min_combined",
    seed: str = "",
    query: str = "",
) -> list[MemoryEntry]:
    """The ``k`` entries a prompt should show, by the memory kind's own rule."""
    view = state.view(kind, memory)
    if isinstance(view, NDimensionalMemory):
        found = view.retrieve(k, strategy, seed)
        return found or view.retrieve(k, "random", seed)
    if isinstance(view, SearchMemory):
        return view.retrieve(k, query)
    return view.retrieve(k)


def dedup_key(entry: MemoryEntry) -> str:
    """Entries with the same content (ignoring their id) are duplicates."""
    content = {
        "solution": entry.solution,
        "feedback": entry.feedback,
        "score": entry.score,
        "answer": entry.answer,
    }
    return json.dumps(content, sort_keys=True, ensure_ascii=False)


_TOKEN = re.compile(r"[A-Za-z]+|\d+|\\[A-Za-z]+")


def tokens(text: str) -> list[str]:
    """Lower-cased words, numbers and LaTeX command names."""
    return [token.lower() for token in _TOKEN.findall(text)]


def _score(entry: MemoryEntry) -> float:
    return -math.inf if entry.score is None else entry.score


def _dimension_values(entry: MemoryEntry) -> dict[str, float] | None:
    """Values along each dimension (higher is better), or ``None`` when invalid."""
    score = entry.score
    if score is not None and not math.isfinite(score):
        return None
    return {"performance": _score(entry), "complexity": -float(len(entry.solution))}


def _add_to_groups(
    groups: tuple[tuple[float, tuple[int, ...]], ...], value: float, index: int
) -> tuple[tuple[float, tuple[int, ...]], ...]:
    out = list(groups)
    for position, (existing, members) in enumerate(out):
        if existing == value:
            out[position] = (existing, (*members, index))
            return tuple(out)
        if existing < value:
            out.insert(position, (value, (index,)))
            return tuple(out)
    out.append((value, (index,)))
    return tuple(out)


def _cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    dot = sum(weight * b.get(term, 0.0) for term, weight in a.items())
    norm = math.sqrt(sum(w * w for w in a.values())) * math.sqrt(sum(w * w for w in b.values()))
    return dot / norm if norm else 0.0


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
