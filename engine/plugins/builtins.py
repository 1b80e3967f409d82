"""The built-in tools, registered through the same registry as any plugin tool."""

from __future__ import annotations

from typing import Any

from engine.plugins.registry import BUILTIN, PluginSet, RegisteredTool
from handlers.episode.prompts import TOOL_USAGE


def _python(settings: Any) -> Any:
    from engine.bootstrap import SandboxedPython

    return SandboxedPython()


def _local_rag(settings: Any) -> Any:
    from engine.config import default_data_dir
    from engine.rag.tool import LocalRagTool

    return LocalRagTool(data_dir=default_data_dir(settings) / "rag")


def add_builtin_tools(plugins: PluginSet) -> None:
    plugins.add_tool(RegisteredTool(
        name="python_code", usage=TOOL_USAGE["python_code"], source=BUILTIN, plugin=BUILTIN,
        build=_python, args="raw text (a Python program)", timeout=None,
        description="sandboxed Python 3 (stdout comes back)"))
    plugins.add_tool(RegisteredTool(
        name="local_rag", usage=TOOL_USAGE["local_rag"], source=BUILTIN, plugin=BUILTIN,
        build=_local_rag, args='JSON {"repo_name", "query"}', timeout=None,
        description="retrieval over library documentation"))
