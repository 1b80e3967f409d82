"""An adversary for the ``math`` grader: mutation operators on gold answers (issue 30).

Each :class:`Operator` turns a gold (LaTeX) into a mutant that either means something
else (``changing``: a correct grader must score it 0) or means the same (``preserving``:
a grader should score it 1), or returns None where it does not apply. Most mutants are
answers, compared with the gold as they are; ``reply`` operators write a whole reply,
whose final answer is extracted first (:func:`grade_mutant`), as the engine does.

The golds are every benchmark answer in ``shared/data`` and every labelled case
(:func:`load_golds`); :func:`sample_mutants` draws a reproducible sample per operator.
The tests (``tests/grading/test_grading_fuzz.py``) and ``bench/grading.py --fuzz`` use it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from engine.testing.grading_adversary import (  # noqa: F401 - each module registers its operators
    changing_box_contexts,
    changing_constants,
    changing_digits,
    changing_forms,
    changing_near_misses,
    changing_prose,
    changing_readings,
    changing_relations,
    changing_replies,
    changing_structure,
    changing_units,
    changing_values,
    changing_words,
    preserving_forms,
    preserving_notation,
    preserving_replies,
    preserving_values,
)
from engine.testing.grading_adversary.golds import Gold, load_golds
from engine.testing.grading_adversary.registry import CHANGING, OPERATORS, PRESERVING, Operator
from handlers.grading import extract_final_answer, grade_answer
from handlers.ports import Grade

__all__ = [
    "CHANGING",
    "OPERATORS",
    "PRESERVING",
    "Gold",
    "Mutant",
    "Operator",
    "grade_mutant",
    "load_golds",
    "operators",
    "sample_mutants",
]

EXTRA_PASSES = 4
"""Passes over the golds an operator applies to when one pass gave fewer mutants than asked."""


@dataclass(frozen=True)
class Mutant:
    """One mutant of one gold, and the operator that made it."""

    operator: Operator
    gold: Gold
    text: str

    def grade(self) -> Grade:
        return grade_mutant(self.operator, self.text, self.gold.text)

    def wrong(self, grade: Grade) -> bool:
        """The grade is a false positive (changing) or a false negative (preserving)."""
        return grade.score != (0.0 if self.operator.kind == CHANGING else 1.0)


def operators(kind: str | None = None) -> list[Operator]:
    """The registered operators, in name order, of one kind or all."""
    return sorted((op for op in OPERATORS.values() if kind in (None, op.kind)), key=lambda op: op.name)


def grade_mutant(operator: Operator, mutant: str, gold: str) -> Grade:
    """The ``math`` grade of ``mutant``: a reply's extracted final answer, or the answer itself."""
    answer = extract_final_answer(mutant) if operator.target == "reply" else mutant
    return grade_answer(answer, gold, "math")


def sample_mutants(operator: Operator, golds: list[Gold], count: int, seed: int = 0) -> list[Mutant]:
    """Up to ``count`` distinct mutants, golds in a seeded order; the same arguments give the same list.

    Golds are visited once each; if that gives fewer than ``count``, the golds the operator
    applied to are visited again (new random choices) up to :data:`EXTRA_PASSES` times.
    """
    rng = random.Random(f"{seed}:{operator.name}")
    order = list(golds)
    rng.shuffle(order)
    found: dict[tuple[str, str], Mutant] = {}
    applicable: list[Gold] = []
    for passes in range(1 + EXTRA_PASSES):
        for gold in order if passes == 0 else applicable:
            if len(found) >= count:
                return list(found.values())
            text = operator(gold.text, rng)
            if text is None:
                continue
            if passes == 0:
                applicable.append(gold)
            found.setdefault((gold.text, text), Mutant(operator, gold, text))
        if not applicable:
            break
    return list(found.values())
