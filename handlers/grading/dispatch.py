"""One entry point that grades an answer with the mode a run asked for."""

from __future__ import annotations

from typing import Final, Literal, get_args

from handlers.grading.hendrycks import hendrycks_equal
from handlers.grading.pipeline import grade_math
from handlers.grading.reference import extracted_detail, reference_extract_answer, reference_math_equal
from handlers.grading.verify import grade_with_math_verify
from handlers.ports import Grade

GradingMode = Literal["math", "math_verify", "reference", "reference_evolve", "exact", "hendrycks"]
GRADING_MODES: Final[tuple[str, ...]] = get_args(GradingMode)
DEFAULT_MODE: Final = "math"


def grade_answer(answer: str | None, ground_truth: str, mode: str = DEFAULT_MODE, *,
                 numeric_tolerance: float | None = None) -> Grade:
    """Score ``answer`` against ``ground_truth``.

    Modes:
        ``math`` (default): apollo's grader, normalise -> parse -> compare
        (:mod:`handlers.grading.pipeline`; main thread of a worker process).
        ``math_verify``: mathematical equivalence via ``math-verify`` alone (main thread only).
        ``reference``: the reference grader's extraction and equality, for comparability
        with published numbers; pass the whole reply text to reproduce its extraction.
        ``reference_evolve``: the reference's evolving grader (B): the same, except the last
        ``<answer>`` block is tried right after the boxed search.
        ``exact``: string equality after trimming whitespace.
        ``hendrycks``: the Hendrycks MATH ``is_equiv`` string normaliser (the reference's grader C).

    ``numeric_tolerance`` (``grading.numeric_tolerance``) lets the ``math`` mode accept numbers
    within that relative distance; the other modes ignore it.

    Raises:
        ValueError: ``mode`` is not one of :data:`GRADING_MODES`.
    """
    if mode not in GRADING_MODES:
        msg = f"unknown grading mode {mode!r}; expected one of {', '.join(GRADING_MODES)}"
        raise ValueError(msg)
    if answer is None or not answer.strip():
        return Grade(score=0.0, method=mode, detail="no answer")
    if mode == "math":
        return grade_math(answer, ground_truth, numeric_tolerance=numeric_tolerance)
    if mode == "hendrycks":
        return Grade(score=float(hendrycks_equal(answer, ground_truth)), method=mode)
    if mode == "exact":
        return Grade(score=float(answer.strip() == ground_truth.strip()), method=mode)
    if mode in ("reference", "reference_evolve"):
        extracted = reference_extract_answer(answer, answer_tags=mode == "reference_evolve")
        correct = reference_math_equal(extracted, ground_truth)
        return Grade(score=float(correct), method=mode, detail=extracted_detail(extracted))
    return grade_with_math_verify(answer, ground_truth)
