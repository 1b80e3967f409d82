"""The operator type and the table every operator module registers into."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from engine.testing.grading_adversary.shapes import commented

Kind = Literal["changing", "preserving"]
Target = Literal["answer", "reply"]
Mutate = Callable[[str, random.Random], "str | None"]

CHANGING: Final = "changing"
"""The mutant means something other than the gold: a correct grader must score it 0."""
PRESERVING: Final = "preserving"
"""The mutant means the gold: a grader should score it 1."""


@dataclass(frozen=True)
class Operator:
    """One mutation: ``mutate(gold, rng)`` returns the mutant, or None where it does not apply.

    ``target`` says what the mutant is: an ``answer`` (what the grader compares with the
    gold) or a whole ``reply`` (its final answer is extracted first, as the engine does).
    """

    name: str
    kind: Kind
    mutate: Mutate
    target: Target = "answer"
    doc: str = ""

    def __call__(self, gold: str, rng: random.Random) -> str | None:
        if commented(gold):
            return None  # "28 %": anything written after it would be inside the comment, unseen
        mutant = self.mutate(gold, rng)
        # A changing operator that gives back the gold itself has changed nothing.
        return None if mutant is None or (self.kind == CHANGING and mutant.strip() == gold.strip()) else mutant


OPERATORS: dict[str, Operator] = {}


def register(kind: Kind, target: Target = "answer") -> Callable[[Mutate], Mutate]:
    """Decorator: add the function to :data:`OPERATORS` under its own name."""

    def add(function: Mutate) -> Mutate:
        name = function.__name__
        if name in OPERATORS:
            raise ValueError(f"two grading adversary operators are named {name!r}")
        doc = (function.__doc__ or "").strip().splitlines()
        OPERATORS[name] = Operator(name, kind, function, target, doc[0] if doc else "")
        return function

    return add


def changing(function: Mutate) -> Mutate:
    return register(CHANGING)(function)


def preserving(function: Mutate) -> Mutate:
    return register(PRESERVING)(function)


def changing_reply(function: Mutate) -> Mutate:
    return register(CHANGING, "reply")(function)


def preserving_reply(function: Mutate) -> Mutate:
    return register(PRESERVING, "reply")(function)
