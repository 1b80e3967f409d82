"""Graders by name: the built-in modes (plugins add theirs to a run's catalog, ``handlers.catalog``).

A grader maps ``(final answer, ground truth, metadata)`` to a :class:`Grade` (a score
and the method that produced it). The math modes are marked ``pooled``: the engine
runs them in its grading process pool (``math-verify`` needs a process's main
thread). Other graders are called directly by the engine's grading adapter.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from handlers.domains.choice import grade_choice
from handlers.grading.dispatch import grade_answer
from handlers.named import index
from handlers.ports import Grade

GraderFunction = Callable[[str, str, Mapping[str, Any]], "Grade | float | bool | Awaitable[Any]"]
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]*")


@dataclass(frozen=True)
class GraderSpec:
    """A named grader; ``pooled`` ones run in the engine's grading process pool."""

    name: str
    grade: GraderFunction
    description: str = ""
    pooled: bool = False

    def check(self) -> None:
        """Raise ``ValueError`` saying what is wrong with this definition."""
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            msg = f"grader name must be a plain identifier, got {self.name!r}"
            raise ValueError(msg)
        if not callable(self.grade):
            msg = f"grader {self.name!r}: not callable"
            raise ValueError(msg)
        try:
            inspect.signature(self.grade).bind("answer", "truth", {})
        except TypeError as exc:
            msg = f"grader {self.name!r} must accept (answer, ground_truth, metadata): {exc}"
            raise ValueError(msg) from exc
        except ValueError:
            pass  # no introspectable signature: trust it


def as_grade(value: object, method: str) -> Grade:
    """Whatever a grader returned, as a :class:`Grade` (bool and numbers become scores)."""
    if isinstance(value, Grade):
        return value
    if isinstance(value, bool | int | float):
        return Grade(score=float(value), method=method)
    msg = f"grader {method!r} returned {type(value).__name__}, expected a Grade, a number or a bool"
    raise TypeError(msg)


def _pooled(mode: str) -> GraderFunction:
    def grade(answer: str, ground_truth: str, metadata: Mapping[str, Any]) -> Grade:
        return grade_answer(answer, ground_truth, mode)

    return grade


def _choice(answer: str, ground_truth: str, metadata: Mapping[str, Any]) -> Grade:
    return grade_choice(answer, ground_truth, metadata)


BUILTIN_GRADERS: Final[tuple[GraderSpec, ...]] = (
    GraderSpec("math", _pooled("math"),
               "apollo's math grader: normalise, parse, compare; math-verify is one stage", pooled=True),
    GraderSpec("math_verify", _pooled("math_verify"),
               "math-verify alone (the baseline apollo's grader is measured against)", pooled=True),
    GraderSpec("reference", _pooled("reference"), "the reference system's extraction and equality", pooled=True),
    GraderSpec("reference_evolve", _pooled("reference_evolve"),
               "the reference's evolving grader (B): also reads the last <answer> block", pooled=True),
    GraderSpec("exact", _pooled("exact"), "string equality after trimming", pooled=True),
    GraderSpec("hendrycks", _pooled("hendrycks"),
               "the Hendrycks MATH is_equiv string normaliser (the reference's grader C)", pooled=True),
    GraderSpec("choice", _choice, "multiple choice: same letter after normalisation"),
)
_BUILTIN = index("grader", BUILTIN_GRADERS)


def get_grader(name: str) -> GraderSpec:
    """The built-in grader called ``name``; ``LookupError`` names the built-in ones."""
    found = _BUILTIN.get(name)
    if found is None:
        msg = f"unknown grader {name!r} (built in: {', '.join(grader_names())})"
        raise LookupError(msg)
    return found


def grader_names() -> list[str]:
    """Names of the built-in graders."""
    return sorted(_BUILTIN)


def builtin_graders() -> list[GraderSpec]:
    return list(BUILTIN_GRADERS)
