"""The evolve workflow's view of the recorded run settings, and its episode names.

Deciders read everything from ``RunStarted.settings`` (never the live config), so
replay decides exactly as the live run did. The engine validates these keys
(``engine.config.settings.EvolveSettings``); the defaults here only cover older recordings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

ROLES: Final = ("policy", "summarizer", "verifier", "aggregator")
_EPISODE = re.compile(r"^r(\d+)\.(policy|summary|aggregate|verifier\.(\d+))$")


@dataclass(frozen=True)
class VerifierEpisode:
    """How each verifier episode runs (the reference's ``verifier_env``)."""

    max_steps: int = 4
    history_length: int = 4
    enable_python_code: bool = True
    enable_local_rag: bool = False
    python_code_timeout: float = 30.0

    @property
    def tools(self) -> list[str]:
        tools = ["python_code"] if self.enable_python_code else []
        return [*tools, "local_rag"] if self.enable_local_rag else tools


@dataclass(frozen=True)
class Plan:
    """The evolve settings of one run."""

    rounds: int = 10
    verifiers: int = 5
    scored_history_length: int = 3
    solution_memory: str = "ndimensional"
    retrieval: str = "min_combined"
    enable_verify: bool = True
    summarize: bool = True
    aggregate: bool = True
    format_retries: int = 5
    tie: str = "reject"
    final_answer: str = "best_vote"
    branch_max_workers: int = 0
    verifier_max_workers: int = 0
    branches: tuple[str | None, ...] = (None,)
    verifier_episode: VerifierEpisode = VerifierEpisode()

    def initial_branches(self) -> tuple[str | None, ...]:
        """Branches started with the run; the rest start as others finish."""
        cap = self.branch_max_workers
        return self.branches if cap <= 0 else self.branches[:cap]

    def initial_verifiers(self) -> range:
        """Verifier episodes started with the round; the rest start as others report."""
        cap = self.verifier_max_workers
        return range(self.verifiers if cap <= 0 else min(cap, self.verifiers))

    def waiting_verifier(self, reported: int) -> int | None:
        """The verifier the ``reported``-th report of a round starts, if any waits.

        The k-th report (in stream order) starts verifier ``cap + k - 1``, so concurrent
        reports never start the same verifier twice and at most ``cap`` run at once.
        """
        cap = self.verifier_max_workers
        index = cap + reported - 1
        return index if cap > 0 and index < self.verifiers else None


def plan_of(settings: dict[str, Any]) -> Plan:
    """The evolve plan recorded in a run's settings."""
    evolve = dict(settings.get("evolve") or {})
    verifier = dict(evolve.get("verifier_episode") or {})
    branches = tuple(str(b["branch_id"]) for b in settings.get("branches") or [])
    known = {
        name for name in Plan.__dataclass_fields__ if name not in ("branches", "verifier_episode")
    }
    fields = {key: value for key, value in evolve.items() if key in known}
    episode_fields = VerifierEpisode.__dataclass_fields__
    return Plan(
        **fields,
        branches=branches or (None,),
        verifier_episode=VerifierEpisode(
            **{k: v for k, v in verifier.items() if k in episode_fields}
        ),
    )


def models_for(settings: dict[str, Any], branch: str | None) -> dict[str, dict[str, Any]]:
    """The model settings per role for a branch (``None``: the run's own models).

    A branch names its policy and optionally its verifier; a branch without one uses
    ``evolve.default_verifier``, else the run's verifier. The summarizer and the
    aggregator use the branch's verifier model (as the reference does).
    """
    models = dict(settings.get("models") or {})
    policy = dict(models.get("policy") or {})
    verifier = dict(models.get("verifier") or policy)
    if branch is None:
        return {
            "policy": policy,
            "verifier": verifier,
            "summarizer": dict(models.get("summarizer") or verifier),
            "aggregator": dict(models.get("aggregator") or verifier),
        }
    spec = branch_spec(settings, branch)
    default = (settings.get("evolve") or {}).get("default_verifier") or verifier
    branch_verifier = dict(spec.get("verifier") or default)
    return {
        "policy": dict(spec.get("policy") or policy),
        "verifier": branch_verifier,
        "summarizer": branch_verifier,
        "aggregator": branch_verifier,
    }


def branch_spec(settings: dict[str, Any], branch: str) -> dict[str, Any]:
    for spec in settings.get("branches") or []:
        if str(spec.get("branch_id")) == branch:
            return dict(spec)
    return {}


def tool_settings_for(settings: dict[str, Any], role: str) -> dict[str, Any]:
    """Run settings as a tool call of ``role`` sees them.

    A verifier's tool calls obey the verifier episode's own switches and timeout (the
    reference's ``verifier_env``), not the policy's: python off for the policy and on for
    the verifiers still runs the verifiers' code.
    """
    if role != "verifier":
        return settings
    verifier = plan_of(settings).verifier_episode
    episode = {
        **dict(settings.get("episode") or {}),
        "enable_python_code": verifier.enable_python_code,
        "enable_local_rag": verifier.enable_local_rag,
        "python_code_timeout": verifier.python_code_timeout,
        "tools": verifier.tools,
    }
    return {**settings, "episode": episode}


def branch_settings(settings: dict[str, Any], branch: str | None) -> dict[str, Any]:
    """Run settings as a branch's model calls see them: its models under the plain roles."""
    if branch is None:
        return settings
    return {**settings, "models": models_for(settings, branch), "branch": branch}


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
