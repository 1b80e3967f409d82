"""The informal-math domain: LaTeX answers in ``\\boxed{}``, graded for equivalence."""

from __future__ import annotations

from handlers.domains.base import Domain
from handlers.grading.extraction import extract_final_answer


def extract_math_answer(reply: str, answer: str | None) -> str | None:
    """The last boxed value of the answer block (or of the visible reply)."""
    return extract_final_answer(reply)


MATH = Domain(
    name="math",
    extract=extract_math_answer,
    grader="math",
    default_tools=("python_code", "local_rag"),
    description="informal math: LaTeX answer in \\boxed{}, graded by mathematical equivalence",
)
"""Prompts keep their original math wording (``intro``/``answer_usage`` left unset)."""
