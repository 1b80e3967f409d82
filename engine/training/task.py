"""The demo's problems: small-number additions, a task a 135M model can learn in a few dozen steps.

Each step's problems are drawn from a generator seeded with the step, so a resumed run asks
exactly the questions the killed one asked (and their submissions are the same events).
"""

from __future__ import annotations

import random

import msgspec

QUESTION = "Continue the list:\n2 + 5 = \\boxed{{7}}\n4 + 4 = \\boxed{{8}}\n{a} + {b} ="
"""Two worked lines, then the problem: with the engine's single-turn prompt, the untrained model
boxes an answer in about a third of its replies and the right sum in about one in eight (a
bare "What is 3 + 4?" is answered in prose, never boxed, which leaves GRPO nothing to learn from)."""


EXAMPLE_SUMS = frozenset({7, 8})


class Problem(msgspec.Struct, frozen=True, kw_only=True):
    problem_id: str
    question: str
    answer: str


def problems_for_step(step: int, count: int, *, seed: int = 0, high: int = 9) -> list[Problem]:
    """``count`` distinct problems ``a + b`` with ``1 <= a, b <= high`` for one step; sums equal to
    the worked lines' (7, 8) are left out, so copying an example is never right."""
    rng = random.Random(f"apollo-train-demo-{seed}-{step}")
    out: list[Problem] = []
    seen: set[tuple[int, int]] = set()
    while len(out) < count:
        a, b = rng.randint(1, high), rng.randint(1, high)
        if a + b in EXAMPLE_SUMS or ((a, b) in seen and len(seen) < high * high):
            continue
        seen.add((a, b))
        out.append(Problem(problem_id=f"add-{a}-{b}", question=QUESTION.format(a=a, b=b), answer=str(a + b)))
    return out
