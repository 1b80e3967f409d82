"""What is loaded: every tool, domain, grader and reward, and which plugin brought it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.plugins.errors import PluginError
from engine.tools.spec import BUILTIN, RegisteredTool
from handlers.catalog import Catalog, builtin_catalog
from handlers.domains.base import Domain
from handlers.grading.registry import GraderSpec
from handlers.rewards import RewardSpec


@dataclass(frozen=True)
class Entry:
    """One row of ``apollo plugins``."""

    kind: str
    name: str
    plugin: str
    source: str
    detail: str = ""


@dataclass
class PluginSet:
    """The loaded extensions; :meth:`catalog` is what handlers and replay get from them."""

    tools: dict[str, RegisteredTool] = field(default_factory=dict)
    domains: dict[str, tuple[Domain, Entry]] = field(default_factory=dict)
    graders: dict[str, tuple[GraderSpec, Entry]] = field(default_factory=dict)
    rewards: dict[str, tuple[RewardSpec, Entry]] = field(default_factory=dict)
    plugins: list[Entry] = field(default_factory=list)
    """One entry per loaded plugin (kind ``plugin``)."""
    _catalog: Catalog | None = field(default=None, repr=False, compare=False)

    def add_tool(self, tool: RegisteredTool) -> None:
        if tool.name in self.tools:
            owner = self.tools[tool.name]
            raise PluginError(tool.plugin, tool.source, f"duplicate tool tag {tool.name!r}: already registered "
                              f"by {_owner(owner.plugin, owner.source)}")
        self.tools[tool.name] = tool
        self._catalog = None

    def add_domain(self, domain: Domain, entry: Entry) -> None:
        self._unique(self.domains, "domain", domain.name, entry, builtin=domain.name in builtin_catalog().domains)
        self.domains[domain.name] = (domain, entry)
        self._catalog = None

    def add_grader(self, spec: GraderSpec, entry: Entry) -> None:
        self._unique(self.graders, "grader", spec.name, entry, builtin=spec.name in builtin_catalog().graders)
        self.graders[spec.name] = (spec, entry)
        self._catalog = None

    def add_reward(self, spec: RewardSpec, entry: Entry) -> None:
        self._unique(self.rewards, "reward", spec.name, entry, builtin=spec.name in builtin_catalog().rewards)
        self.rewards[spec.name] = (spec, entry)
        self._catalog = None

    @staticmethod
    def _unique(table: dict[str, tuple[Any, Entry]], kind: str, name: str, entry: Entry, *, builtin: bool) -> None:
        if builtin:
            raise PluginError(entry.plugin, entry.source, f"duplicate {kind} {name!r}: already registered by {BUILTIN}")
        if name in table:
            owner = table[name][1]
            raise PluginError(entry.plugin, entry.source, f"duplicate {kind} {name!r}: already registered "
                              f"by {_owner(owner.plugin, owner.source)}")

    def check(self) -> None:
        """Cross-references: a plugin domain's grader and default tools must exist."""
        graders = set(builtin_catalog().graders) | set(self.graders)
        for domain, entry in self.domains.values():
            if domain.grader not in graders:
                raise PluginError(entry.plugin, entry.source, f"domain {domain.name!r} names grader "
                                  f"{domain.grader!r}, which no plugin registers (known: {', '.join(sorted(graders))})")
            missing = [t for t in domain.default_tools if t not in self.tools]
            if missing:
                raise PluginError(entry.plugin, entry.source, f"domain {domain.name!r} offers unknown "
                                  f"tool(s) {', '.join(missing)}")

    def catalog(self) -> Catalog:
        """The built-ins plus these plugins' domains, graders, rewards and tools (built once)."""
        if self._catalog is None:
            origins = {kind: {name: _owner(entry.plugin, entry.source) for name, (_, entry) in table.items()}
                       for kind, table in (("domain", self.domains), ("grader", self.graders),
                                           ("reward", self.rewards))}
            self._catalog = builtin_catalog().extended(
                domains=[d for d, _ in self.domains.values()], graders=[g for g, _ in self.graders.values()],
                rewards=[r for r, _ in self.rewards.values()],
                tools={name: tool.usage for name, tool in self.tools.items()}, origins=origins)
        return self._catalog

    def tool_runners(self, settings: Any) -> dict[str, Any]:
        """A fresh runner per tool (each process builds its own)."""
        return {name: tool.build(settings) for name, tool in self.tools.items()}

    def plugin_tools(self) -> list[str]:
        """Tags of tools that came from plugins, in load order."""
        return [name for name, tool in self.tools.items() if tool.plugin != BUILTIN]

    def entries(self) -> list[Entry]:
        """Everything loaded, built-ins included, for listings."""
        rows = [Entry("tool", t.name, t.plugin, t.source, f"args: {t.args}; "
                      + (f"timeout {t.timeout:g}s; " if t.timeout else "") + t.description)
                for t in self.tools.values()]
        builtins = builtin_catalog()
        rows += [Entry("domain", d.name, BUILTIN, BUILTIN, f"grader {d.grader}; {d.description}")
                 for d in builtins.domains.values()]
        rows += [Entry("domain", d.name, e.plugin, e.source, f"grader {d.grader}; {d.description}")
                 for d, e in self.domains.values()]
        rows += [Entry("grader", g.name, BUILTIN, BUILTIN, g.description) for g in builtins.graders.values()]
        rows += [Entry("grader", g.name, e.plugin, e.source, g.description) for g, e in self.graders.values()]
        rows += [Entry("reward", r.name, BUILTIN, BUILTIN, r.description) for r in builtins.rewards.values()]
        rows += [Entry("reward", r.name, e.plugin, e.source, r.description) for r, e in self.rewards.values()]
        return rows


def _owner(plugin: str, source: str) -> str:
    return BUILTIN if plugin == BUILTIN else f"plugin {plugin!r} ({source})"
