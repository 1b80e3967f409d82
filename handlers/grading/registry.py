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

from handlers.grading import builtin
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
    sources: tuple[str, ...] = ()
    """For a built-in grader: the modules (a package means all of it) whose code its version covers."""

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


_GRADING = ("handlers.grading",)

BUILTIN_GRADERS: Final[tuple[GraderSpec, ...]] = (
    GraderSpec("math", builtin.math_grader,
               "apollo's math grader: every token read, exact comparison; math-verify is not used",
               pooled=True, sources=_GRADING),
    GraderSpec("math_verify", builtin.math_verify_grader,
               "math-verify alone (the baseline apollo's grader is measured against)", pooled=True, sources=_GRADING),
    GraderSpec("reference", builtin.reference_grader, "the reference system's extraction and equality",
               pooled=True, sources=_GRADING),
    GraderSpec("reference_evolve", builtin.reference_evolve_grader,
               "the reference's evolving grader (B): also reads the last <answer> block", pooled=True,
               sources=_GRADING),
    GraderSpec("exact", builtin.exact_grader, "string equality after trimming", pooled=True, sources=_GRADING),
    GraderSpec("hendrycks", builtin.hendrycks_grader,
               "the Hendrycks MATH is_equiv string normaliser (the reference's grader C)", pooled=True,
               sources=_GRADING),
    GraderSpec("choice", builtin.choice_grader, "multiple choice: the same letter, read by a closed grammar",
               sources=_GRADING),
)
"""The one table of built-in graders: the pool, the versions and the grading modes read it."""

POOLED_GRADERS: Final[tuple[str, ...]] = tuple(spec.name for spec in BUILTIN_GRADERS if spec.pooled)
"""The built-in graders that run in the engine's grading process pool (the grading modes)."""
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
