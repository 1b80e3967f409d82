"""Final-answer extraction and grading (pure; heavy libraries load on first use)."""

from handlers.grading.dispatch import DEFAULT_MODE, GRADING_MODES, grade_answer
from handlers.grading.extraction import extract_final_answer, last_boxed
from handlers.grading.reference import (
    reference_extract_answer,
    reference_math_equal,
    reference_score,
    reference_strip,
)
from handlers.grading.verify import grade_with_math_verify

__all__ = [
    "DEFAULT_MODE",
    "GRADING_MODES",
    "extract_final_answer",
    "grade_answer",
    "grade_with_math_verify",
    "last_boxed",
    "reference_extract_answer",
    "reference_math_equal",
    "reference_score",
    "reference_strip",
]
