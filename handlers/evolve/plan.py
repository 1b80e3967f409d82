"""The evolve workflow's plan (its recorded settings with its branches) and its episode names.

Deciders read everything from ``RunStarted.settings`` (never the live config), so
replay decides exactly as the live run did; the settings' types and defaults are
:mod:`handlers.run_settings`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from handlers.run_settings import EvolveSpec, RunSettings, run_settings_of

ROLES: Final = ("policy", "summarizer", "verifier", "aggregator")
_EPISODE = re.compile(r"^r(\d+)\.(policy|summary|aggregate|verifier\.(\d+))$")


class Plan(EvolveSpec, frozen=True, kw_only=True):
    """The evolve settings of one run, with its branches."""

    branches: tuple[str | None, ...] = (None,)

    def initial_branches(self) -> tuple[str | None, ...]:
        """Branches started with the run; the rest start as others finish."""
        cap = self.branch_max_workers
        return self.branches if cap <= 0 else self.branches[:cap]


def plan_of(settings: Mapping[str, Any]) -> Plan:
    """The evolve plan recorded in a run's settings (for readers; a decider takes
    :func:`plan_of_run` of the settings its context carries).

    Raises:
        handlers.run_settings.RunSettingsError: a recorded evolve value is garbage.
    """
    return plan_of_run(run_settings_of(settings))


def plan_of_run(run: RunSettings) -> Plan:
    """The evolve plan of typed run settings."""
    return Plan(**msgspec.structs.asdict(run.evolve), branches=run.branch_ids)


@dataclass(frozen=True)
class EpisodeRef:
    """Which evolve episode an event belongs to."""

    round: int
    kind: str
    """``policy``, ``summary``, ``verifier`` or ``aggregate``."""
    index: int = 0
    """The verifier's index (verifier episodes only)."""


def episode_id(branch: str | None, round_: int, kind: str, index: int | None = None) -> str:
    """``r3.policy``, ``r3.verifier.2``...; prefixed with ``<branch>:`` in branch runs."""
    name = f"r{round_}.{kind}" if index is None else f"r{round_}.{kind}.{index}"
    return name if branch is None else f"{branch}:{name}"


def parse_episode(branch: str | None, episode: str) -> EpisodeRef | None:
    """The reference of an evolve episode name, or ``None`` for any other episode."""
    if branch is not None:
        prefix = f"{branch}:"
        if not episode.startswith(prefix):
            return None
        episode = episode[len(prefix) :]
    match = _EPISODE.match(episode)
    if match is None:
        return None
    kind = match.group(2)
    if match.group(3) is not None:
        return EpisodeRef(int(match.group(1)), "verifier", int(match.group(3)))
    return EpisodeRef(int(match.group(1)), kind)
