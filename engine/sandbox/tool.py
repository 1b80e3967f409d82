"""``PythonCodeTool``: the ``python_code`` tool of the reference, backed by the sandbox."""

from __future__ import annotations

import json
import math
from typing import Any

from engine.sandbox.errors import SandboxError
from engine.sandbox.outcome import empty_code_json, exception_json, tool_json
from engine.sandbox.sandbox import PythonSandbox
from handlers.ports import ToolError, ToolResult

NAME = "python_code"


class PythonCodeTool:
    """Runs a tag body as Python; the text is the reference's JSON, the score 0 or 1.

    Recognised settings: ``python_code_timeout`` (seconds) and ``enable_python_code``.
    Failures of the user's code are results; failures of the sandbox raise ``ToolError``.
    """

    name = NAME

    def __init__(self, sandbox: PythonSandbox) -> None:
        self._sandbox = sandbox

    async def run(self, tool_input: str, settings: dict[str, Any]) -> ToolResult:
        """Run ``tool_input`` and render the outcome as the reference did."""
        settings = settings if isinstance(settings, dict) else {}
        if settings.get("enable_python_code", True) is False:
            text = json.dumps(
                {"result": "Python code execution is not enabled.", "status": "disabled"}
            )
            return ToolResult(text=text, score=0.0)
        if not isinstance(tool_input, str):
            text, score = exception_json(f"code must be a string, not {type(tool_input).__name__}")
            return ToolResult(text=text, score=score)
        if not tool_input.strip():
            text, score = empty_code_json()
            return ToolResult(text=text, score=score)
        try:
            outcome = await self._sandbox.run(tool_input, timeout=_timeout(settings))
        except SandboxError as exc:
            raise ToolError(str(exc), kind="sandbox") from exc
        text, score = tool_json(outcome)
        return ToolResult(text=text, score=score)


def _timeout(settings: dict[str, Any]) -> float | None:
    """``python_code_timeout`` when it is a usable positive number, else the default."""
    value = settings.get("python_code_timeout")
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds > 0 else None
