"""The engine's grader: built-in math modes in the process pool, other graders by name.

Every grade leaves here stamped with the grader's name and version (a digest of its code
and settings, :mod:`handlers.grading.version`), so each recorded grade says what gave it.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping
from typing import Any

import msgspec

from handlers.catalog import Catalog, builtin_catalog
from handlers.grading.registry import GraderSpec, as_grade
from handlers.grading.version import grader_version
from handlers.ports import Grade

PLUGIN_GRADER_TIMEOUT = 10.0


class RegistryGrader:
    """:class:`handlers.ports.AnswerGrader` that routes ``mode`` to the catalog's grader
    (the built-ins unless the composition root passes the plugins' catalog)."""

    def __init__(self, pool: Any, *, timeout: float = PLUGIN_GRADER_TIMEOUT, catalog: Catalog | None = None,
                 settings: Mapping[str, Any] | None = None) -> None:
        self.pool = pool
        self.timeout = timeout
        self.catalog = catalog or builtin_catalog()
        self.settings = dict(settings or {})
        """Grading settings: part of every grader's version."""
        # Taken now, next to when the code was imported: a file edited later on disk is
        # not the code this process (or its pool) grades with.
        self._versions = {name: grader_version(name, self.settings, grade=spec.grade)
                          for name, spec in self.catalog.graders.items()}

    def version_of(self, spec: GraderSpec) -> str:
        """The version of ``spec`` under this grader's settings."""
        found = self._versions.get(spec.name)
        if found is None:
            found = self._versions[spec.name] = grader_version(spec.name, self.settings, grade=spec.grade)
        return found

    async def grade(self, answer: str, ground_truth: str, mode: str,
                    metadata: dict[str, Any] | None = None) -> Grade:
        try:
            spec = self.catalog.grader(mode)
        except LookupError as exc:
            return Grade(score=0.0, method=f"{mode}:unknown", detail=str(exc))
        grade = await self._grade(spec, answer, ground_truth, mode, metadata)
        return msgspec.structs.replace(grade, grader=spec.name, grader_version=self.version_of(spec))

    async def _grade(self, spec: GraderSpec, answer: str, ground_truth: str, mode: str,
                     metadata: dict[str, Any] | None) -> Grade:
        if spec.pooled:
            return await self.pool.grade(answer, ground_truth, spec.name, metadata=metadata)
        try:
            if inspect.iscoroutinefunction(spec.grade):
                value = await asyncio.wait_for(spec.grade(answer, ground_truth, metadata or {}), self.timeout)
            else:
                value = await asyncio.wait_for(
                    asyncio.to_thread(spec.grade, answer, ground_truth, metadata or {}), self.timeout)
            return as_grade(value, spec.name)
        except TimeoutError:
            return Grade(score=0.0, method=f"{mode}:error", detail=f"grading took longer than {self.timeout:g} s")
        except Exception as exc:  # noqa: BLE001 - a plugin grader's bug is a graded 0 with its reason
            return Grade(score=0.0, method=f"{mode}:error", detail=f"{type(exc).__name__}: {exc}"[:500])

    def close(self) -> Any:
        closer = getattr(self.pool, "close", None)
        return closer() if closer is not None else None
