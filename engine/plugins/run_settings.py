"""A run's extension choices, resolved and recorded in ``RunStarted.settings``.

Deciders never read live registries for tools: the enabled tool tags
(``episode.tools``), their usage text (``tool_usage``), the domain
(``episode.domain``), the grader (``episode.grading``) and the reward
(``episode.reward``) are fixed here, once, when the run starts, and each plugin
domain, grader or reward chosen is recorded with its plugin (``extensions``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.plugins.registry import PluginSet
from engine.tools.builtin_tools import ENABLE_FLAGS, enabled_by_default
from handlers.episode.protocol import implied_grader


def resolve_run_settings(run: dict[str, Any], plugins: PluginSet) -> dict[str, Any]:
    """``run`` with domain, tools, tool usage, grader and reward filled in and checked.

    Raises:
        ValueError: an unknown domain, tool, grader or reward (the message names the key).
    """
    episode = dict(run.get("episode", {}))
    catalog = plugins.catalog()
    try:
        domain = catalog.domain(episode.get("domain"))
    except LookupError as exc:
        raise ValueError(f"episode.domain: {exc}") from exc
    tools = episode.get("tools")
    if tools is None:
        tools = default_tools(domain.default_tools, episode, plugins)
    unknown = [t for t in tools if t not in plugins.tools]
    if unknown:
        msg = (f"episode.tools: unknown tool(s) {', '.join(map(repr, unknown))} "
               f"(registered: {', '.join(sorted(plugins.tools))})")
        raise ValueError(msg)
    episode["domain"] = domain.name
    episode["tools"] = list(dict.fromkeys(tools))
    # An explicit grader wins; else the protocol's (the reference's own), else the domain's.
    episode["grading"] = episode.get("grading") or implied_grader(episode.get("protocol")) or domain.grader
    for key, lookup in (("grading", catalog.grader), ("reward", catalog.reward)):
        try:
            lookup(episode[key]) if episode.get(key) else None
        except LookupError as exc:
            raise ValueError(f"episode.{key}: {exc}") from exc
    resolved = {**run, "episode": episode, "tool_usage": {tag: catalog.tools[tag] for tag in episode["tools"]}}
    extensions = _plugin_choices(episode, catalog.origins)
    if extensions:  # a run of built-ins alone records what it always did
        resolved["extensions"] = extensions
    return resolved


def _plugin_choices(episode: dict[str, Any], origins: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    """``{kind: {name: plugin}}`` for the plugin domain, grader and reward the run uses, so a
    replay without that plugin can say which one it lacks."""
    chosen = {"domain": episode.get("domain"), "grader": episode.get("grading"), "reward": episode.get("reward")}
    found: dict[str, dict[str, str]] = {}
    for kind, name in chosen.items():
        plugin = origins.get(kind, {}).get(name) if isinstance(name, str) else None
        if plugin is not None:
            found[kind] = {name: plugin}
    return found


def default_tools(domain_tools: tuple[str, ...], episode: dict[str, Any], plugins: PluginSet) -> list[str]:
    """The domain's tools (built-ins obey their enable flags), then every plugin tool."""
    chosen = [t for t in domain_tools
              if t not in ENABLE_FLAGS or episode.get(ENABLE_FLAGS[t], enabled_by_default(ENABLE_FLAGS[t]))]
    return [*chosen, *(t for t in plugins.plugin_tools() if t not in chosen)]
