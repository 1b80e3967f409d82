"""Finding and loading plugins: Python entry points and the ``plugins:`` config list.

Entry points of the group :data:`ENTRY_POINT_GROUP` are loaded from every installed
distribution, then each ``"module:attribute"`` of the ``plugins`` setting. Loading
stops at the first bad plugin with a :class:`PluginError` naming it, so the engine
never runs with half of its extensions.
"""

from __future__ import annotations

import importlib
import inspect
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from engine.plugins.api import Plugin
from engine.plugins.errors import PluginError
from engine.plugins.registry import Entry, PluginSet, RegisteredTool
from engine.tools.builtin_tools import BUILTIN_TOOLS
from engine.tools.spec import Tool, ToolSpec, class_tool
from handlers.domains.base import Domain
from handlers.grading.registry import GraderSpec
from handlers.rewards import RewardSpec

ENTRY_POINT_GROUP = "apollo.plugins"
"""``[project.entry-points."apollo.plugins"]`` in a plugin package's pyproject.toml."""

_lock = threading.Lock()
_cache: dict[tuple[str, ...], PluginSet] = {}


@dataclass(frozen=True)
class Candidate:
    """A plugin found but not yet imported."""

    name: str
    source: str
    load: Callable[[], Any]


def load_plugins(settings: Any, *, reload: bool = False) -> PluginSet:
    """The built-ins plus every discovered plugin, loaded once per process.

    Handlers see them through ``load_plugins(settings).catalog()``, which the composition
    root puts in their context; nothing process-wide changes.

    Raises:
        PluginError: a plugin failed to import, has a bad definition or clashes with
            another; nothing of this load is kept then.
    """
    key = tuple(getattr(settings, "plugins", ()) or ())
    with _lock:
        if not reload and key in _cache:
            return _cache[key]
        plugins = build_plugin_set(discover(key))
        _cache.clear()
        _cache[key] = plugins
        return plugins


def forget() -> None:
    """Drop the cache: the next load discovers plugins again (tests, ``apollo plugins``)."""
    with _lock:
        _cache.clear()


def loaded() -> PluginSet | None:
    """The set the last successful load kept, if any (a failed load keeps none of its own)."""
    with _lock:
        return next(iter(_cache.values()), None)


def discover(import_paths: Iterable[str]) -> list[Candidate]:
    """Entry points first (sorted by name for a stable order), then configured paths."""
    found = []
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: (p.name, p.value)):
        dist = getattr(point, "dist", None)
        owner = f" of {dist.name} {dist.version}" if dist is not None else ""
        found.append(Candidate(point.name, f"entry point {point.value}{owner}", point.load))
    for path in import_paths:
        found.append(Candidate(path, "config plugins", lambda path=path: import_object(path)))
    return found


def import_object(path: str) -> Any:
    """``package.module:attribute`` (attribute may be dotted) -> the object."""
    module_name, sep, attribute = path.partition(":")
    if not sep or not module_name or not attribute:
        msg = f"expected 'package.module:attribute', got {path!r}"
        raise ValueError(msg)
    value: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        value = getattr(value, part)
    return value


def build_plugin_set(candidates: Iterable[Candidate]) -> PluginSet:
    plugins = PluginSet()
    for builtin in BUILTIN_TOOLS:
        plugins.add_tool(builtin)
    for candidate in candidates:
        try:
            target = candidate.load()
        except Exception as exc:
            raise PluginError(candidate.name, candidate.source, f"cannot be imported: {type(exc).__name__}: {exc}") \
                from exc
        name = target.name if isinstance(target, Plugin) and target.name else candidate.name
        plugins.plugins.append(Entry("plugin", name, name, candidate.source, getattr(target, "description", "") or ""))
        for item in _items(target, name, candidate.source):
            _register(plugins, item, name, candidate.source)
    plugins.check()
    return plugins


def _items(target: Any, plugin: str, source: str) -> list[Any]:
    if isinstance(target, Plugin):
        return target.contents()
    if isinstance(target, list | tuple):
        return list(target)
    return [target]


def _register(plugins: PluginSet, item: Any, plugin: str, source: str) -> None:
    entry = Entry("", "", plugin, source)
    try:
        if isinstance(item, ToolSpec):
            plugins.add_tool(RegisteredTool.from_spec(item, plugin=plugin, source=source))
        elif isinstance(item, type) and (issubclass(item, Tool) or hasattr(item, "call")):
            plugins.add_tool(RegisteredTool.from_spec(class_tool(item), plugin=plugin, source=source))
        elif isinstance(item, Domain):
            item.check()
            plugins.add_domain(item, entry)
        elif isinstance(item, GraderSpec):
            item.check()
            plugins.add_grader(item, entry)
        elif isinstance(item, RewardSpec):
            item.check()
            plugins.add_reward(item, entry)
        else:
            raise ValueError(_not_an_extension(item))
    except ValueError as exc:
        raise PluginError(plugin, source, str(exc)) from exc


def _not_an_extension(item: Any) -> str:
    if inspect.iscoroutinefunction(item) or inspect.isfunction(item):
        return (f"{getattr(item, '__name__', item)!r} is a plain function: decorate it with "
                "@tool, @grader(...) or @reward(...) from engine.plugins")
    return (f"{item!r} is not a tool, domain, grader, reward or Plugin "
            "(see docs/extending/)")
