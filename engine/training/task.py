"""The demo's task: small-number additions, as a plugin domain with its own grader.

The untrained 135M model almost never writes ``\\boxed{}`` under the engine's single-turn
prompt (a few replies in a hundred), so a plain correct/wrong grade leaves GRPO with groups
of zeros and nothing to learn from. The ``train_demo_sum`` grader gives half the score for
the answer format (a boxed answer) and half for the right number (boxed, or else the last
number of the reply), so both can be learned and the grade says which was.

Each step's problems are drawn from a generator seeded with the step, so a resumed run asks
exactly the questions the killed one asked (and their submissions are the same events).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

import msgspec

from engine.plugins.api import Domain, Plugin, grader
from handlers.grading.extraction import last_boxed, mask_reasoning_and_tools
from handlers.ports import Grade

DOMAIN = "train_demo_sum"
_NUMBER = re.compile(r"-?\d+")
_BOXED = re.compile(r"^\\boxed\{(.*)\}$", re.DOTALL)

QUESTION = "What is {a} + {b}? Put your final answer in \\boxed{{}}."
SYSTEM_PROMPT = "You are a calculator. Reply with only the final number inside \\boxed{}, for example: \\boxed{5}"
"""The policy's system prompt (in place of SmolLM2's default one)."""


EXAMPLE_SUMS = frozenset({5})


class Problem(msgspec.Struct, frozen=True, kw_only=True):
    problem_id: str
    question: str
    answer: str


def problems_for_step(step: int, count: int, *, seed: int = 0, high: int = 9) -> list[Problem]:
    """``count`` distinct problems ``a + b`` with ``1 <= a, b <= high`` for one step; a sum equal to
    the system prompt's example (5) is left out, so copying the example is never right."""
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


def extract_sum(reply: str, answer: str | None) -> str | None:
    """``\\boxed{X}`` for the last boxed value, else the reply's last number, else ``None``."""
    del answer
    visible = mask_reasoning_and_tools(reply)
    boxed = last_boxed(visible)
    if boxed is not None:
        return f"\\boxed{{{boxed.strip()}}}"
    numbers = _NUMBER.findall(visible)
    return numbers[-1] if numbers else None


@grader(DOMAIN, description="0.5 for a boxed answer + 0.5 for the right number (the demo's sums)")
def grade_sum(answer: str, ground_truth: str, metadata: Mapping[str, Any]) -> Grade:
    del metadata
    match = _BOXED.match(answer.strip())
    value = (match.group(1) if match else answer).strip().strip("$ ")
    right = value == ground_truth.strip()
    score = 0.5 * bool(match) + 0.5 * right
    detail = f"{'boxed' if match else 'not boxed'}, {'right' if right else 'wrong'} number ({value[:20]!r})"
    return Grade(score=score, method=DOMAIN, detail=detail)


PLUGIN = Plugin(
    name="train-demo",
    domains=[Domain(name=DOMAIN, extract=extract_sum, grader=DOMAIN,
                    description="the training demo's small sums: format and number graded separately")],
    graders=[grade_sum],
    description="the task of `apollo train --demo`",
)
PLUGIN_PATH = "engine.training.task:PLUGIN"
"""How the demo's settings name it (``plugins:``)."""
