"""What is loaded: every tool, domain, grader and reward, and which plugin brought it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.plugins.errors import PluginError
from engine.tools.spec import BUILTIN, RegisteredTool
from handlers import domains as domain_registry
from handlers import rewards as reward_registry
from handlers.domains.base import Domain
from handlers.grading import registry as grader_registry
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
    """The loaded extensions; :meth:`install` makes domains, graders and rewards visible to handlers."""

    tools: dict[str, RegisteredTool] = field(default_factory=dict)
    domains: dict[str, tuple[Domain, Entry]] = field(default_factory=dict)
    graders: dict[str, tuple[GraderSpec, Entry]] = field(default_factory=dict)
    rewards: dict[str, tuple[RewardSpec, Entry]] = field(default_factory=dict)
    plugins: list[Entry] = field(default_factory=list)
    """One entry per loaded plugin (kind ``plugin``)."""

    def add_tool(self, tool: RegisteredTool) -> None:
        if tool.name in self.tools:
            owner = self.tools[tool.name]
            raise PluginError(tool.plugin, tool.source, f"duplicate tool tag {tool.name!r}: already registered "
                              f"by {_owner(owner.plugin, owner.source)}")
        self.tools[tool.name] = tool

    def add_domain(self, domain: Domain, entry: Entry) -> None:
        self._unique(self.domains, "domain", domain.name, entry,
                     builtin=domain.name in {d.name for d in domain_registry.builtin_domains()})
        self.domains[domain.name] = (domain, entry)

    def add_grader(self, spec: GraderSpec, entry: Entry) -> None:
        self._unique(self.graders, "grader", spec.name, entry,
                     builtin=spec.name in {g.name for g in grader_registry.builtin_graders()})
        self.graders[spec.name] = (spec, entry)

    def add_reward(self, spec: RewardSpec, entry: Entry) -> None:
        self._unique(self.rewards, "reward", spec.name, entry,
                     builtin=spec.name in {r.name for r in reward_registry.builtin_rewards()})
        self.rewards[spec.name] = (spec, entry)

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
        graders = set(grader_registry.grader_names()) | set(self.graders)
        for domain, entry in self.domains.values():
            if domain.grader not in graders:
                raise PluginError(entry.plugin, entry.source, f"domain {domain.name!r} names grader "
                                  f"{domain.grader!r}, which no plugin registers (known: {', '.join(sorted(graders))})")
            missing = [t for t in domain.default_tools if t not in self.tools]
            if missing:
                raise PluginError(entry.plugin, entry.source, f"domain {domain.name!r} offers unknown "
                                  f"tool(s) {', '.join(missing)}")

    def install(self) -> None:
        """Make plugin domains, graders and rewards the ones handlers see (replacing earlier ones)."""
        domain_registry.install_plugins(d for d, _ in self.domains.values())
        grader_registry.install_plugins(g for g, _ in self.graders.values())
        reward_registry.install_plugins(r for r, _ in self.rewards.values())

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
        rows += [Entry("domain", d.name, BUILTIN, BUILTIN, f"grader {d.grader}; {d.description}")
                 for d in domain_registry.builtin_domains()]
        rows += [Entry("domain", d.name, e.plugin, e.source, f"grader {d.grader}; {d.description}")
                 for d, e in self.domains.values()]
        rows += [Entry("grader", g.name, BUILTIN, BUILTIN, g.description) for g in grader_registry.builtin_graders()]
        rows += [Entry("grader", g.name, e.plugin, e.source, g.description) for g, e in self.graders.values()]
        rows += [Entry("reward", r.name, BUILTIN, BUILTIN, r.description) for r in reward_registry.builtin_rewards()]
        rows += [Entry("reward", r.name, e.plugin, e.source, r.description) for r, e in self.rewards.values()]
        return rows


def _owner(plugin: str, source: str) -> str:
    return BUILTIN if plugin == BUILTIN else f"plugin {plugin!r} ({source})"
