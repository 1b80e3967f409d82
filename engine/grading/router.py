"""The engine's grader: built-in math modes in the process pool, other graders by name."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from handlers.grading.registry import as_grade, get_grader
from handlers.ports import Grade

PLUGIN_GRADER_TIMEOUT = 10.0


class RegistryGrader:
    """:class:`handlers.ports.AnswerGrader` that routes ``mode`` to the registered grader."""

    def __init__(self, pool: Any, *, timeout: float = PLUGIN_GRADER_TIMEOUT) -> None:
        self.pool = pool
        self.timeout = timeout

    async def grade(self, answer: str, ground_truth: str, mode: str,
                    metadata: dict[str, Any] | None = None) -> Grade:
        try:
            spec = get_grader(mode)
        except LookupError as exc:
            return Grade(score=0.0, method=f"{mode}:unknown", detail=str(exc))
        if spec.pooled:
            return await self.pool.grade(answer, ground_truth, mode)
        try:
            if inspect.iscoroutinefunction(spec.grade):
                value = await asyncio.wait_for(spec.grade(answer, ground_truth, metadata or {}), self.timeout)
            else:
                value = await asyncio.wait_for(
                    asyncio.to_thread(spec.grade, answer, ground_truth, metadata or {}), self.timeout)
            return as_grade(value, spec.name)
        except TimeoutError:
            return Grade(score=0.0, method=f"{mode}:error", detail=f"grading took longer than {self.timeout:g} s")
        except Exception as exc:
            return Grade(score=0.0, method=f"{mode}:error", detail=f"{type(exc).__name__}: {exc}"[:500])

    def close(self) -> Any:
        closer = getattr(self.pool, "close", None)
        return closer() if closer is not None else None
