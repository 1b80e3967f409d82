"""The built-in graders, one function each, with the signature every grader has.

Each takes ``(answer, ground_truth, metadata)``; the ones that read a grading setting take
it as a keyword (``numeric_tolerance``). ``handlers.grading.registry.BUILTIN_GRADERS`` lists
them; nothing else does. They are module-level functions so the engine's grading pool can
send them to its worker processes by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from handlers.grading.choice import grade_choice
from handlers.grading.hendrycks import hendrycks_equal
from handlers.grading.lexicon import question_nouns
from handlers.grading.pipeline import grade_math
from handlers.grading.reference import extracted_detail, reference_extract_answer, reference_math_equal
from handlers.grading.verify import grade_with_math_verify
from handlers.ports import QUESTION_KEY, Grade


def _no_answer(answer: str | None, method: str) -> Grade | None:
    if answer is None or not answer.strip():
        return Grade(score=0.0, method=method, detail="no answer")
    return None


def math_grader(answer: str, ground_truth: str, metadata: Mapping[str, Any], *,
                numeric_tolerance: float | None = None) -> Grade:
    """apollo's sound math grader (:mod:`handlers.grading.pipeline`); ``numeric_tolerance``
    (``grading.numeric_tolerance``) accepts numbers within that relative distance."""
    with question_nouns(metadata.get(QUESTION_KEY)):
        return _no_answer(answer, "math") or grade_math(answer, ground_truth, numeric_tolerance=numeric_tolerance)


def math_verify_grader(answer: str, ground_truth: str, metadata: Mapping[str, Any]) -> Grade:
    """Mathematical equivalence by ``math-verify`` alone (needs a process's main thread)."""
    return _no_answer(answer, "math_verify") or grade_with_math_verify(answer, ground_truth)


def _reference(answer: str, ground_truth: str, method: str, *, answer_tags: bool) -> Grade:
    extracted = reference_extract_answer(answer, answer_tags=answer_tags)
    correct = reference_math_equal(extracted, ground_truth)
    return Grade(score=float(correct), method=method, detail=extracted_detail(extracted))


def reference_grader(answer: str, ground_truth: str, metadata: Mapping[str, Any]) -> Grade:
    """The reference system's extraction and equality; give it the whole reply to reproduce it."""
    return _no_answer(answer, "reference") or _reference(answer, ground_truth, "reference", answer_tags=False)


def reference_evolve_grader(answer: str, ground_truth: str, metadata: Mapping[str, Any]) -> Grade:
    """The reference's evolving grader (B): as ``reference``, and the last <answer> block is read too."""
    return (_no_answer(answer, "reference_evolve")
            or _reference(answer, ground_truth, "reference_evolve", answer_tags=True))


def exact_grader(answer: str, ground_truth: str, metadata: Mapping[str, Any]) -> Grade:
    """String equality after trimming whitespace."""
    return _no_answer(answer, "exact") or Grade(score=float(answer.strip() == ground_truth.strip()), method="exact")


def hendrycks_grader(answer: str, ground_truth: str, metadata: Mapping[str, Any]) -> Grade:
    """The Hendrycks MATH ``is_equiv`` string normaliser (the reference's grader C)."""
    return _no_answer(answer, "hendrycks") or Grade(score=float(hendrycks_equal(answer, ground_truth)),
                                                     method="hendrycks")


def choice_grader(answer: str, ground_truth: str, metadata: Mapping[str, Any]) -> Grade:
    """Multiple choice: the same letter, each side read by a closed grammar."""
    return grade_choice(answer, ground_truth, metadata)
