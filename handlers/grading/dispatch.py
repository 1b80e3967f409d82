"""One entry point that grades an answer with a built-in grader named by the run (its mode)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Final

from handlers.grading.registry import BUILTIN_GRADERS, POOLED_GRADERS
from handlers.ports import Grade, grading_metadata

GRADING_MODES: Final[tuple[str, ...]] = POOLED_GRADERS
"""The names ``grade_answer`` takes: the built-in graders the grading pool runs."""
DEFAULT_MODE: Final = "math"
POOLED_SPECS: Final = {spec.name: spec for spec in BUILTIN_GRADERS if spec.pooled}
"""The pooled built-in graders by name: what ``grade_answer`` and the grading pool run."""


def grade_answer(answer: str | None, ground_truth: str, mode: str = DEFAULT_MODE, *,
                 numeric_tolerance: float | None = None, question: str | None = None) -> Grade:
    """Score ``answer`` against ``ground_truth`` with the built-in grader ``mode``
    (``handlers.grading.registry.BUILTIN_GRADERS`` says what each does).

    ``numeric_tolerance`` (``grading.numeric_tolerance``) goes to the graders that read it
    (``math``); the others ignore it. ``question`` is the problem's, as an episode's grading hands it over
    (``math`` takes from it the nouns a count may name).

    Raises:
        ValueError: ``mode`` is not one of :data:`GRADING_MODES`.
    """
    spec = POOLED_SPECS.get(mode)
    if spec is None:
        msg = f"unknown grading mode {mode!r}; expected one of {', '.join(GRADING_MODES)}"
        raise ValueError(msg)
    metadata = grading_metadata(question, {})
    return run_grader(spec.grade, answer or "", ground_truth, metadata, numeric_tolerance=numeric_tolerance)


def run_grader(grade: Callable[..., Any], answer: str, ground_truth: str, metadata: dict, *,
               numeric_tolerance: float | None = None) -> Grade:
    """Call a pooled grader function, passing the grading settings it declares it reads.

    The grading pool sends this function and the grader's (module-level) function to a
    worker process; both travel by name.
    """
    if numeric_tolerance is not None and _reads_tolerance(grade):
        return grade(answer, ground_truth, metadata, numeric_tolerance=numeric_tolerance)
    return grade(answer, ground_truth, metadata)


@functools.cache
def _reads_tolerance(grade: Callable[..., Any]) -> bool:
    """Whether ``grade`` takes ``numeric_tolerance`` (asked once per grader function)."""
    try:
        return "numeric_tolerance" in inspect.signature(grade).parameters
    except (TypeError, ValueError):
        return False
