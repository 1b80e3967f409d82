"""The training reward of a finished episode: the grade combined with penalties.

:func:`shaped_reward` is the default: the grade minus ``episode.invalid_turn_penalty``
for every turn that broke the action protocol, never below ``episode.min_reward``.
With the default penalty of 0 the reward is the grade itself.

To use another rule, a plugin registers a function ``(RewardInput) -> float`` under a
name (``@reward("name")``) and the run sets ``episode.reward: name``. The name is
recorded with the run and looked up in the catalog the handler gets, so replay computes
the same reward (or says which plugin it lacks).
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import msgspec

from handlers.named import index
from handlers.run_settings import RunSettings

DEFAULT_REWARD = "default"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]*")


@dataclass(frozen=True)
class RewardInput:
    """What a reward function may use: the grade and how the episode went."""

    score: float
    """The grader's score (0..1 for the built-in graders)."""
    invalid_turns: int
    steps: int
    done_reason: str
    """``answer``, ``max_steps``, ``model_failed``, ``empty_action``..."""
    episode: dict[str, Any] = field(default_factory=dict)
    """The run's recorded ``episode`` settings (penalties and options live here)."""


RewardFunction = Callable[[RewardInput], float]


@dataclass(frozen=True)
class RewardSpec:
    name: str
    compute: RewardFunction
    description: str = ""

    def check(self) -> None:
        """Raise ``ValueError`` saying what is wrong with this definition."""
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            msg = f"reward name must be a plain identifier, got {self.name!r}"
            raise ValueError(msg)
        if not callable(self.compute):
            msg = f"reward {self.name!r}: not callable"
            raise ValueError(msg)
        try:
            inspect.signature(self.compute).bind(None)
        except TypeError as exc:
            msg = f"reward {self.name!r} must accept one argument (RewardInput): {exc}"
            raise ValueError(msg) from exc
        except ValueError:
            pass


def shaped_reward(result: RewardInput) -> float:
    """Grade minus ``invalid_turn_penalty`` per invalid turn, floored at ``min_reward``."""
    penalty = float(result.episode.get("invalid_turn_penalty", 0.0) or 0.0)
    if penalty == 0.0:
        return result.score
    floor = float(result.episode.get("min_reward", 0.0))
    return max(floor, result.score - penalty * result.invalid_turns)


BUILTIN_REWARDS: Final[tuple[RewardSpec, ...]] = (
    RewardSpec(DEFAULT_REWARD, shaped_reward, "grade minus a penalty per invalid turn"),
)
_BUILTIN = index("reward", BUILTIN_REWARDS)


def get_reward(name: str | None) -> RewardSpec:
    """The built-in reward called ``name`` (``None``: the default)."""
    found = _BUILTIN.get(name or DEFAULT_REWARD)
    if found is None:
        msg = f"unknown reward {name!r} (built in: {', '.join(reward_names())})"
        raise LookupError(msg)
    return found


def reward_names() -> list[str]:
    """Names of the built-in rewards."""
    return sorted(_BUILTIN)


def builtin_rewards() -> list[RewardSpec]:
    return list(BUILTIN_REWARDS)


class RewardCatalog(Protocol):
    """Where a run's reward function is found (``handlers.catalog.Catalog`` is one)."""

    def reward_of(self, run: RunSettings) -> RewardSpec: ...


def compute_reward(run: RunSettings, catalog: RewardCatalog, *, score: float, invalid_turns: int, steps: int,
                   done_reason: str) -> float:
    """The reward of a finished episode under the run's recorded ``episode.reward``.

    Raises:
        ValueError: the reward function returned something that is not a finite number.
        handlers.catalog.ExtensionMissing: the run's reward is not in ``catalog``.
    """
    spec = catalog.reward_of(run)
    episode = msgspec.to_builtins(run.episode)  # a plugin's reward reads plain values
    value = spec.compute(RewardInput(score=score, invalid_turns=invalid_turns, steps=steps,
                                     done_reason=done_reason, episode=episode))
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        msg = f"reward {spec.name!r} returned {value!r}, expected a finite number"
        raise ValueError(msg)
    return float(value)
