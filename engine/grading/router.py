"""The engine's grader: built-in math modes in the process pool, other graders by name."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from handlers.catalog import Catalog, builtin_catalog
from handlers.grading.registry import as_grade
from handlers.ports import Grade

PLUGIN_GRADER_TIMEOUT = 10.0


class RegistryGrader:
    """:class:`handlers.ports.AnswerGrader` that routes ``mode`` to the catalog's grader
    (the built-ins unless the composition root passes the plugins' catalog)."""

    def __init__(self, pool: Any, *, timeout: float = PLUGIN_GRADER_TIMEOUT, catalog: Catalog | None = None) -> None:
        self.pool = pool
        self.timeout = timeout
        self.catalog = catalog or builtin_catalog()

    async def grade(self, answer: str, ground_truth: str, mode: str,
                    metadata: dict[str, Any] | None = None) -> Grade:
        try:
            spec = self.catalog.grader(mode)
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
