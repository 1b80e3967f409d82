"""Extending apollo without editing it: tools, task domains, graders and rewards as plugins.

A plugin package declares an entry point in the group ``apollo.plugins`` (or is named
in the ``plugins:`` setting as ``package.module:attribute``) pointing at a tool, a
domain, a grader, a reward, a list of them, or a :class:`Plugin`. See docs/extending/.

Plugin authors import from here::

    from engine.plugins import Plugin, Tool, tool, grader, reward, Domain, Grade, ToolResult
"""

from __future__ import annotations

from typing import Any

from engine.errors import ConfigError
from engine.grading.router import RegistryGrader
from engine.plugins.api import Plugin, grader, reward
from engine.plugins.errors import PluginError
from engine.plugins.loader import ENTRY_POINT_GROUP, discover, forget, import_object, load_plugins
from engine.plugins.registry import BUILTIN, Entry, PluginSet, RegisteredTool
from engine.plugins.run_settings import resolve_run_settings
from engine.tools.spec import Tool, ToolSpec, as_tool_result, tool
from handlers.domains.base import Domain
from handlers.grading.registry import GraderSpec
from handlers.ports import Grade, ToolResult
from handlers.rewards import RewardInput, RewardSpec


def check_settings(settings: Any, plugins: PluginSet) -> dict[str, Any]:
    """The engine's own run settings resolved against the loaded plugins.

    Raises:
        ConfigError: the configured domain, tools, grader or reward is not registered.
    """
    try:
        return resolve_run_settings(settings.run_settings(), plugins)
    except ValueError as exc:
        raise ConfigError(f"invalid config: {exc}") from exc


def report(settings: Any) -> list[dict[str, str]]:
    """Rows for ``apollo doctor``: ``{"area", "name", "status", "detail", "fix"}`` each.

    Never raises: a bad plugin or setting is one ``fail`` row saying what to fix.
    """
    try:
        plugins = load_plugins(settings)
        check_settings(settings, plugins)
    except ConfigError as exc:
        return [{"area": "plugins", "name": getattr(exc, "plugin", "settings"), "status": "fail",
                 "detail": str(exc), "fix": "fix or uninstall the plugin, or the setting it names; "
                 "`apollo plugins` shows what loads"}]
    rows = [{"area": "plugins", "name": entry.name, "status": "ok", "detail": entry.source, "fix": ""}
            for entry in plugins.plugins]
    rows += [{"area": "plugins", "name": f"{entry.kind} {entry.name}", "status": "ok",
              "detail": f"from {entry.plugin}", "fix": ""}
             for entry in plugins.entries() if entry.plugin != BUILTIN]
    if not rows:
        rows.append({"area": "plugins", "name": "plugins", "status": "ok",
                     "detail": f"none installed (entry point group {ENTRY_POINT_GROUP})", "fix": ""})
    return rows


__all__ = [
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "Domain",
    "Entry",
    "Grade",
    "GraderSpec",
    "Plugin",
    "PluginError",
    "PluginSet",
    "RegisteredTool",
    "RegistryGrader",
    "RewardInput",
    "RewardSpec",
    "Tool",
    "ToolResult",
    "ToolSpec",
    "as_tool_result",
    "check_settings",
    "discover",
    "forget",
    "grader",
    "import_object",
    "load_plugins",
    "report",
    "resolve_run_settings",
    "reward",
    "tool",
]
