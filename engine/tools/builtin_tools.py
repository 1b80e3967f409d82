"""The built-in tools, registered through the same registry as any plugin tool."""

from __future__ import annotations

from typing import Any

from engine.config.settings import default_data_dir
from engine.tools.local_rag import LocalRagTool
from engine.tools.python_code import SandboxedPython
from engine.tools.spec import BUILTIN, RegisteredTool
from handlers.episode.prompts import TOOL_USAGE
from handlers.run_settings import EpisodeSpec


def _python(settings: Any) -> Any:
    return SandboxedPython()


def _local_rag(settings: Any) -> Any:
    return LocalRagTool(data_dir=default_data_dir(settings) / "rag")


BUILTIN_TOOLS: tuple[RegisteredTool, ...] = (
    RegisteredTool(
        name="python_code", usage=TOOL_USAGE["python_code"], source=BUILTIN, plugin=BUILTIN,
        build=_python, args="raw text (a Python program)", timeout=None,
        description="sandboxed Python 3 (stdout comes back)", enabled_by="enable_python_code"),
    RegisteredTool(
        name="local_rag", usage=TOOL_USAGE["local_rag"], source=BUILTIN, plugin=BUILTIN,
        build=_local_rag, args='JSON {"repo_name", "query"}', timeout=None,
        description="retrieval over library documentation", enabled_by="enable_local_rag"),
)
"""Every built-in tool, one record each; the plugin loader registers them before any plugin's."""

ENABLE_FLAGS: dict[str, str] = {tool.name: tool.enabled_by for tool in BUILTIN_TOOLS if tool.enabled_by}
"""Built-in tool -> the ``episode`` switch that enables it."""


def enabled_by_default(flag: str) -> bool:
    """The one default of a tool switch: the recorded settings struct's."""
    return bool(getattr(EpisodeSpec(), flag))
