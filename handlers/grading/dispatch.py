"""One entry point that grades an answer with the mode a run asked for."""

from __future__ import annotations

from typing import Final, Literal, get_args

from handlers.grading.reference import reference_extract_answer, reference_math_equal
from handlers.grading.verify import grade_with_math_verify
from handlers.ports import Grade

GradingMode = Literal["math_verify", "reference", "exact"]
GRADING_MODES: Final[tuple[str, ...]] = get_args(GradingMode)
DEFAULT_MODE: Final = "math_verify"


def grade_answer(answer: str | None, ground_truth: str, mode: str = DEFAULT_MODE) -> Grade:
    """Score ``answer`` against ``ground_truth``.

    Modes:
        ``math_verify``: mathematical equivalence via ``math-verify`` (main thread only).
        ``reference``: the reference grader's extraction and equality, for comparability
        with published numbers; pass the whole reply text to reproduce its extraction.
        ``exact``: string equality after trimming whitespace.

    Raises:
        ValueError: ``mode`` is not one of :data:`GRADING_MODES`.
    """
    if mode not in GRADING_MODES:
        msg = f"unknown grading mode {mode!r}; expected one of {', '.join(GRADING_MODES)}"
        raise ValueError(msg)
    if answer is None or not answer.strip():
        return Grade(score=0.0, method=mode, detail="no answer")
    if mode == "exact":
        return Grade(score=float(answer.strip() == ground_truth.strip()), method=mode)
    if mode == "reference":
        extracted = reference_extract_answer(answer)
        correct = reference_math_equal(extracted, ground_truth)
        return Grade(score=float(correct), method=mode, detail=f"extracted={extracted[:200]}")
    return grade_with_math_verify(answer, ground_truth)
