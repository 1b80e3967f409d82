"""The training reward of a finished episode: the grade combined with penalties.

:func:`shaped_reward` is the default: the grade minus ``episode.invalid_turn_penalty``
for every turn that broke the action protocol, never below ``episode.min_reward``.
With the default penalty of 0 the reward is the grade itself.

To use another rule, register a function ``(RewardInput) -> float`` under a name
(a plugin's ``@reward("name")`` does it) and set ``episode.reward: name``. The name
is recorded with the run, so replay computes the same reward.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from handlers.named import NamedRegistry

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


_registry: NamedRegistry[RewardSpec] = NamedRegistry("reward")
_registry.add_builtin(RewardSpec(DEFAULT_REWARD, shaped_reward, "grade minus a penalty per invalid turn"))


def install_plugins(rewards: Iterable[RewardSpec]) -> None:
    """Replace every plugin reward with ``rewards``."""
    _registry.install_plugins(rewards)


def get_reward(name: str | None) -> RewardSpec:
    return _registry.get(name or DEFAULT_REWARD)


def reward_names() -> list[str]:
    return _registry.names()


def builtin_rewards() -> list[RewardSpec]:
    return _registry.builtins()


def compute_reward(settings: dict[str, Any], *, score: float, invalid_turns: int, steps: int,
                   done_reason: str) -> float:
    """The reward of a finished episode under the run's recorded ``episode.reward``.

    Raises:
        ValueError: the reward function returned something that is not a finite number.
    """
    episode = dict(settings.get("episode", {}))
    spec = get_reward(episode.get("reward"))
    value = spec.compute(RewardInput(score=score, invalid_turns=invalid_turns, steps=steps,
                                     done_reason=done_reason, episode=episode))
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        msg = f"reward {spec.name!r} returned {value!r}, expected a finite number"
        raise ValueError(msg)
    return float(value)
