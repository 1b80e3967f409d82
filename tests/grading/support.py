"""What the grading tests share: a whole reply graded as a grading worker grades it."""

from __future__ import annotations

from handlers.grading import extract_final_answer, grade_answer


def graded(reply: str, gold: str = "42") -> float:
    """The reply's score: its final answer read first (0 when it has none), then graded by ``math``."""
    answer = extract_final_answer(reply)
    return grade_answer(answer, gold).score if answer is not None else 0.0
