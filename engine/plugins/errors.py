"""The one error a bad plugin produces: it names the plugin and where it came from."""

from __future__ import annotations

from engine.errors import ConfigError


class PluginError(ConfigError):
    """A plugin could not be loaded or registered; the engine refuses to start."""

    def __init__(self, plugin: str, source: str, problem: str) -> None:
        self.plugin = plugin
        self.source = source
        self.problem = " ".join(problem.split())
        super().__init__(f"plugin {plugin!r} ({source}): {self.problem}")
