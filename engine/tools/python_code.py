"""``PythonCodeTool``: the ``python_code`` tool of the reference, backed by the sandbox."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
from typing import Any

import structlog

from engine.sandbox.errors import SandboxError
from engine.sandbox.outcome import empty_code_json, exception_json, tool_json
from engine.sandbox.sandbox import PythonSandbox
from handlers.ports import ToolError, ToolOptions, ToolResult

log = structlog.get_logger(__name__)

NAME = "python_code"


class PythonCodeTool:
    """Runs a tag body as Python; the text is the reference's JSON, the score 0 or 1.

    It reads the call's ``python_code_timeout`` (seconds) and ``enable_python_code``.
    Failures of the user's code are results; any failure of the sandbox raises ``ToolError``
    (recorded as a tool failure), never another exception.
    """

    name = NAME

    def __init__(self, sandbox: PythonSandbox) -> None:
        self._sandbox = sandbox

    async def run(self, tool_input: str, options: ToolOptions) -> ToolResult:
        """Run ``tool_input`` and render the outcome as the reference did."""
        if not options.episode.enable_python_code:
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
            outcome = await self._sandbox.run(tool_input, timeout=_timeout(options.episode.python_code_timeout))
        except SandboxError as exc:
            raise ToolError(str(exc), kind="sandbox") from exc
        except Exception as exc:  # any other failure is still the sandbox's
            log.warning("sandbox_call_failed", error=repr(exc))
            raise ToolError(f"the sandbox failed: {exc!r}", kind="sandbox") from exc
        text, score = tool_json(outcome)
        return ToolResult(text=text, score=score)


def _timeout(seconds: float) -> float | None:
    """The call's timeout when it is a usable positive number, else the sandbox's default."""
    return seconds if math.isfinite(seconds) and seconds > 0 else None


class SandboxedPython:
    """The python_code tool; its sandbox's fork server starts on first use, or earlier
    with :meth:`start_in_background`."""

    name = "python_code"

    def __init__(self) -> None:
        self._tool: Any = None
        self._sandbox: Any = None
        self._lock = asyncio.Lock()
        self._warming: asyncio.Task[None] | None = None

    def start_in_background(self) -> None:
        """Begin starting the sandbox now (needs a running event loop; else a no-op)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._warming is None and self._tool is None:
            self._warming = loop.create_task(self._warm())

    async def run(self, tool_input: str, options: ToolOptions) -> Any:
        await self._started()
        return await self._tool.run(tool_input, options)

    async def close(self) -> None:
        if self._warming is not None and not self._warming.done():
            self._warming.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._warming
        if self._sandbox is not None:
            await self._sandbox.close()

    async def _warm(self) -> None:
        try:
            await self._started()
        except Exception as exc:  # noqa: BLE001 - the first call starts it again and reports
            log.warning("sandbox_warm_up_failed", error=repr(exc))

    async def _started(self) -> None:
        async with self._lock:
            if self._tool is None:
                sandbox = PythonSandbox()
                self._sandbox = sandbox
                try:
                    await sandbox.start()
                except BaseException:
                    self._sandbox = None
                    with contextlib.suppress(Exception):
                        await sandbox.close()
                    raise
                self._tool = PythonCodeTool(sandbox)
