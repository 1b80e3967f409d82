"""What plugin authors write: ``@tool``, ``@grader``, ``@reward``, :class:`Domain`, :class:`Plugin`.

An entry point (group ``apollo.plugins``) or a ``plugins:`` config entry names one
object: any of these, a :class:`Tool` subclass, a list of them, or a :class:`Plugin`
bundling several under one name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from handlers.domains.base import Domain
from handlers.grading.registry import GraderFunction, GraderSpec
from handlers.rewards import RewardFunction, RewardInput, RewardSpec


@dataclass(frozen=True)
class Plugin:
    """Several extensions shipped together (one entry point)."""

    name: str
    tools: Sequence[Any] = ()
    domains: Sequence[Domain] = ()
    graders: Sequence[GraderSpec] = ()
    rewards: Sequence[RewardSpec] = ()
    description: str = ""
    items: Sequence[Any] = field(default=())
    """Anything else accepted on its own (mixed lists)."""

    def contents(self) -> list[Any]:
        return [*self.tools, *self.domains, *self.graders, *self.rewards, *self.items]


def grader(name: str, *, description: str = "") -> Callable[[GraderFunction], GraderSpec]:
    """Decorator: ``(answer, ground_truth, metadata) -> Grade | float | bool`` becomes a grader."""

    def wrap(function: GraderFunction) -> GraderSpec:
        return GraderSpec(name=name, grade=function, description=description or _doc(function))

    return wrap


def reward(name: str, *, description: str = "") -> Callable[[RewardFunction], RewardSpec]:
    """Decorator: ``(RewardInput) -> float`` becomes a reward usable as ``episode.reward``."""

    def wrap(function: RewardFunction) -> RewardSpec:
        return RewardSpec(name=name, compute=function, description=description or _doc(function))

    return wrap


def _doc(function: Any) -> str:
    text = (getattr(function, "__doc__", None) or "").strip()
    return text.splitlines()[0] if text else ""


__all__ = ["Domain", "GraderSpec", "Plugin", "RewardInput", "RewardSpec", "grader", "reward"]
