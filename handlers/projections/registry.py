"""The projections the engine keeps live and replay rebuilds, by name.

A projection is a pure fold over one run's events: ``initial() -> S`` and
``evolve(state, event) -> S``. ``state_type`` lets checkpoints decode a stored
state back into ``S`` (msgspec handles Structs, dataclasses and builtins).

Adding one (e.g. the memory projection of the evolve workflow)::

    from handlers.projections import memory
    from handlers.projections.registry import Projection, register

    register(Projection("memory", memory.initial, memory.evolve, memory.MemoryState))

or list the module in :data:`MODULES` when it exposes ``NAME``, ``STATE_TYPE``,
``initial`` and ``evolve`` (and optionally ``decode_state(bytes) -> state``, for states
msgspec cannot decode from ``STATE_TYPE`` alone, and ``EVENT_TYPES``, the only event types
``evolve`` changes the state on) at module level.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from events.base import Event
from handlers.projections import episode


@dataclass(frozen=True)
class Projection:
    """One named fold; the same functions serve the live projector and offline rebuild."""

    name: str
    initial: Callable[[], Any]
    evolve: Callable[[Any, Event], Any]
    state_type: Any
    """Type a checkpointed state decodes into (``Any`` keeps plain JSON data)."""
    decode: Callable[[bytes], Any] | None = None
    """Optional ``bytes -> state`` for states msgspec cannot decode from ``state_type``."""
    event_types: frozenset[type] | None = None
    """The event types ``evolve`` can change the state on; ``None``: any. A bulk rebuild
    calls ``evolve`` only for these (on any other event it must return the state as is)."""

    def folds(self, event_type: type) -> bool:
        """Whether ``evolve`` may change the state on an event of ``event_type``."""
        return self.event_types is None or event_type in self.event_types


def _initial_episode() -> episode.EpisodeState:
    return episode.EpisodeState(episode="main")


_REGISTRY: dict[str, Projection] = {}

MODULES: tuple[str, ...] = ("handlers.projections.memory",)
"""Modules that may define a projection at module level (loaded when present)."""


def register(projection: Projection) -> None:
    """Add (or replace) a projection; names are checkpoint keys, so keep them stable."""
    _REGISTRY[projection.name] = projection


def projections() -> dict[str, Projection]:
    """Every registered projection, loading optional projection modules on first use."""
    for name in MODULES:
        _load_module(name)
    return dict(_REGISTRY)


def _load_module(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:
            return
        raise
    found = [getattr(module, attr, None) for attr in ("NAME", "initial", "evolve")]
    if all(found) and found[0] not in _REGISTRY:
        register(Projection(found[0], module.initial, module.evolve, getattr(module, "STATE_TYPE", Any),
                            getattr(module, "decode_state", None), getattr(module, "EVENT_TYPES", None)))


register(Projection("episode", _initial_episode, episode.evolve, episode.EpisodeState,
                    event_types=episode.EVENT_TYPES))
