"""The catalog: every domain, grader, reward and tool a process offers, passed to handlers.

Deciders look a run's recorded choices up here (``ctx.catalog``), never in process-wide
registries, so what a decider does depends only on the log and the catalog it was given.
The built-ins are always in it; the engine extends it with the loaded plugins
(``engine.plugins.PluginSet.catalog``) and hands the same catalog to replay.

A run recorded with a plugin's domain, grader or reward that this catalog lacks cannot be
decided again: :meth:`Catalog.require` says which entry and which plugin is missing
rather than letting a decider choose something else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType
from typing import Final, TypeVar

from handlers.domains import BUILTIN_DOMAINS, DEFAULT_DOMAIN
from handlers.domains.base import Domain
from handlers.errors import HandlerError
from handlers.grading.registry import BUILTIN_GRADERS, GraderSpec
from handlers.named import index
from handlers.rewards import BUILTIN_REWARDS, DEFAULT_REWARD, RewardSpec
from handlers.run_settings import RunSettings

KINDS: Final = ("domain", "grader", "reward")
T = TypeVar("T")


class ExtensionMissing(HandlerError, LookupError):
    """A run names a domain, grader or reward this process does not have."""

    def __init__(self, message: str, *, kind: str, name: str, plugin: str | None) -> None:
        super().__init__(message)
        self.kind = kind
        self.name = name
        self.plugin = plugin


def _frozen(table: Mapping[str, T]) -> Mapping[str, T]:
    return MappingProxyType(dict(table))


@dataclass(frozen=True)
class Catalog:
    """Named extensions by kind; build one with :func:`builtin_catalog` and :meth:`extended`."""

    domains: Mapping[str, Domain] = field(default_factory=dict)
    graders: Mapping[str, GraderSpec] = field(default_factory=dict)
    rewards: Mapping[str, RewardSpec] = field(default_factory=dict)
    tools: Mapping[str, str] = field(default_factory=dict)
    """Usage text per tool tag (what a run records in ``tool_usage`` when it enables the tool)."""
    origins: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """``{kind: {name: plugin}}`` for every entry a plugin brought (built-ins are absent)."""

    def extended(self, *, domains: Iterable[Domain] = (), graders: Iterable[GraderSpec] = (),
                 rewards: Iterable[RewardSpec] = (), tools: Mapping[str, str] | None = None,
                 origins: Mapping[str, Mapping[str, str]] | None = None) -> Catalog:
        """A new catalog with these entries added.

        Raises:
            ValueError: an entry is malformed or its name is already taken.
        """
        return Catalog(
            domains=_frozen(index("domain", domains, self.domains)),
            graders=_frozen(index("grader", graders, self.graders)),
            rewards=_frozen(index("reward", rewards, self.rewards)),
            tools=_frozen({**self.tools, **(tools or {})}),
            origins=_frozen({kind: _frozen({**self.origins.get(kind, {}), **(origins or {}).get(kind, {})})
                             for kind in KINDS}),
        )

    def domain(self, name: str | None) -> Domain:
        """The domain called ``name`` (``None``: the default); ``LookupError`` lists the known ones."""
        return _lookup("domain", self.domains, name or DEFAULT_DOMAIN)

    def grader(self, name: str) -> GraderSpec:
        return _lookup("grader", self.graders, name)

    def reward(self, name: str | None) -> RewardSpec:
        return _lookup("reward", self.rewards, name or DEFAULT_REWARD)

    def domain_of(self, run: RunSettings) -> Domain:
        """The domain a run recorded; :class:`ExtensionMissing` when it is not here."""
        return self._recorded(run, "domain", self.domains, run.episode.domain or DEFAULT_DOMAIN)

    def reward_of(self, run: RunSettings) -> RewardSpec:
        """The reward a run recorded; :class:`ExtensionMissing` when it is not here."""
        return self._recorded(run, "reward", self.rewards, run.episode.reward or DEFAULT_REWARD)

    def require(self, run_id: str, run: RunSettings) -> None:
        """Check that every domain, grader and reward the run recorded is in this catalog.

        Raises:
            ExtensionMissing: naming the run, the entry and the plugin that brought it.
        """
        wanted = [("domain", self.domains, run.episode.domain or DEFAULT_DOMAIN),
                  ("reward", self.rewards, run.episode.reward or DEFAULT_REWARD)]
        if run.episode.grading:
            wanted.append(("grader", self.graders, run.episode.grading))
        for kind, table, name in wanted:
            self._recorded(run, kind, table, name, run_id=run_id)

    @staticmethod
    def _recorded(run: RunSettings, kind: str, table: Mapping[str, T], name: str, run_id: str | None = None) -> T:
        found = table.get(name)
        if found is not None:
            return found
        plugin = run.extensions.get(kind, {}).get(name)
        subject = f"run {run_id}" if run_id else "this run"
        where = (f" from {plugin}, which is not installed here" if plugin
                 else ", which is neither built in nor brought by a plugin installed here")
        known = ", ".join(sorted(table))
        raise ExtensionMissing(f"{subject} was recorded with {kind} {name!r}{where} (available: {known}); "
                               "install the plugin that provides it to decide this run",
                               kind=kind, name=name, plugin=plugin)


def _lookup(kind: str, table: Mapping[str, T], name: str) -> T:
    found = table.get(name)
    if found is None:
        msg = f"unknown {kind} {name!r} (registered: {', '.join(sorted(table))})"
        raise LookupError(msg)
    return found


@cache
def builtin_catalog() -> Catalog:
    """The built-in domains, graders and rewards, with no tools (the engine adds those)."""
    return Catalog().extended(domains=BUILTIN_DOMAINS, graders=BUILTIN_GRADERS, rewards=BUILTIN_REWARDS)
