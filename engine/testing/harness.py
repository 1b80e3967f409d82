"""Run the real routing table over an event log with chosen services, in-process.

The stand-ins (``EchoPython``, ``ExactGrader``) replace the sandboxed python tool and the
process-pool grader where a test or benchmark measures something else.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from engine.app.bootstrap import settings_for_run
from engine.config.settings import Settings, validate
from engine.eventlog.memory import InMemoryEventLog
from engine.plugins import load_plugins
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.tools.registry import ToolRegistry
from events.run import RUN_ENDINGS
from handlers.context import Services
from handlers.ports import Grade, ToolOptions, ToolResult
from handlers.routes import ROUTES
from handlers.run_settings import EpisodeSpec


class EchoPython:
    """A stand-in python tool: evaluates nothing, echoes a canned stdout."""

    name = "python_code"

    def __init__(self, stdout: str = "RESULT=42\n") -> None:
        self.stdout = stdout
        self.calls: list[str] = []

    async def run(self, tool_input: str, options: ToolOptions) -> ToolResult:
        self.calls.append(tool_input)
        text = json.dumps({"result": self.stdout, "stderr": "", "status": "success", "returncode": 0})
        return ToolResult(text=text, score=1.0)


def tool_options(*, role: str = "policy", **episode: Any) -> ToolOptions:
    """A tool call's options with these ``episode`` values (checked as a recording would be)."""
    return ToolOptions(episode=msgspec.convert(episode, EpisodeSpec, strict=False), role=role)


class ExactGrader:
    """Grades by string equality (the process-pool grader is tested and measured on its own)."""

    async def grade(self, answer: str, ground_truth: str, mode: str, *, metadata: Any = None) -> Any:
        return Grade(score=float(answer.strip() == ground_truth.strip()), method="exact")


def make_settings(raw: dict[str, Any] | None = None) -> Settings:
    return validate(raw or {})


def services(settings: Settings, *, models: Any, tools: dict[str, Any] | None = None,
             grader: Any = None) -> Services:
    """The engine's services with the given model client; tools and grader default to the stand-ins."""
    return Services(
        models=models,
        tools=ToolRegistry(tools if tools is not None else {"python_code": EchoPython()}),
        grader=grader or ExactGrader(),
        settings_for_run=lambda overrides: settings_for_run(settings, overrides),
        catalog=load_plugins(settings).catalog(),
    )


async def run_until_done(log: Any, svc: Services, run_ids: list[str], *, timeout: float = 30.0,
                         concurrency: int = 32) -> Dispatcher:
    """Dispatch until every run ended (completed, failed or cancelled)."""
    dispatcher = Dispatcher(log, ROUTES, svc, DispatcherSettings(pull_timeout=0.05, backoff_base=0.0,
                                                                  concurrency=concurrency))
    task = asyncio.create_task(dispatcher.run())
    try:
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            if all([await _finished(log, run_id) for run_id in run_ids]):
                return dispatcher
            await asyncio.sleep(0.02)
        raise AssertionError(f"runs did not finish: {run_ids}")
    finally:
        dispatcher.stop()
        await asyncio.wait_for(task, 15)


async def _finished(log: Any, run_id: str) -> bool:
    return any(isinstance(r.event, RUN_ENDINGS) for r in await log.read_run(run_id))


def new_memory_log() -> InMemoryEventLog:
    return InMemoryEventLog()


Check = Callable[[], Awaitable[bool]]
