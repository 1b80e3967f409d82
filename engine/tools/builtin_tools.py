"""The built-in tools, registered through the same registry as any plugin tool."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.config.settings import default_data_dir
from engine.tools.local_rag import LocalRagTool
from engine.tools.python_code import SandboxedPython
from engine.tools.spec import BUILTIN, RegisteredTool
from handlers.episode.prompts import TOOL_USAGE

if TYPE_CHECKING:
    from engine.plugins.registry import PluginSet


def _python(settings: Any) -> Any:
    return SandboxedPython()


def _local_rag(settings: Any) -> Any:
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
