"""The tool runner port: tools registered by tag, each called with its run's tool options."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Mapping
from typing import Protocol

from engine.tools.builtin_tools import ENABLE_FLAGS
from handlers.ports import ToolError, ToolOptions, ToolResult


class Tool(Protocol):
    """A tool the model can call with ``<name>...</name>``."""

    name: str

    async def run(self, tool_input: str, options: ToolOptions) -> ToolResult:
        ...


class ToolRegistry:
    """Implements :class:`handlers.ports.ToolRunner` over registered tools."""

    def __init__(self, tools: Mapping[str, Tool], *, timeout: float = 600.0) -> None:
        self.tools = dict(tools)
        self.timeout = timeout

    async def run(self, tool: str, tool_input: str, options: ToolOptions) -> ToolResult:
        implementation = self.tools.get(tool)
        if implementation is None:
            known = ", ".join(sorted(self.tools)) or "none"
            msg = f"unknown tool {tool!r} (available: {known})"
            raise ToolError(msg, kind="unknown_tool")
        flag = ENABLE_FLAGS.get(tool)
        if flag and not getattr(options.episode, flag):
            return disabled_result(tool)
        offered = options.episode.tools
        if not flag and offered is not None and tool not in offered:
            return disabled_result(tool)  # a plugin tool this run did not offer
        try:
            return await asyncio.wait_for(implementation.run(tool_input, options), self.timeout)
        except TimeoutError as exc:
            msg = f"tool {tool} did not finish within {self.timeout:.0f}s"
            raise ToolError(msg, kind="timeout") from exc

    async def close(self) -> None:
        """Close every tool that has a ``close`` (plain or async)."""
        for tool in self.tools.values():
            closer = getattr(tool, "close", None)
            if closer is None:
                continue
            result = closer()
            if inspect.isawaitable(result):
                await result


def disabled_result(tool: str) -> ToolResult:
    label = {"python_code": "Python code execution", "local_rag": "Local RAG"}.get(tool, tool)
    text = json.dumps({"result": f"{label} is not enabled.", "status": "disabled"})
    return ToolResult(text=text, score=0.0)
