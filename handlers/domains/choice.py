"""The multiple-choice domain: the answer is one letter, graded by the ``choice`` grader
(:mod:`handlers.grading.choice`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from handlers.domains.base import Domain
from handlers.grading.choice import LETTERS, read_label
from handlers.grading.extraction import extract_final_answer


def extract_choice(reply: str, answer: str | None) -> str | None:
    """The letter in the reply's answer block (boxed or plain); a label written with text after
    it (``B) 12``) is kept whole, for the grader to check that text against the choices."""
    final = extract_final_answer(reply) or answer
    label = read_label(final)
    if final is None or label is None:
        return None
    return label.letter if not label.rest else final.strip()


def format_choices(question: str, choices: Sequence[Any] | Mapping[str, Any]) -> str:
    """The question followed by one ``X. text`` line per choice."""
    if isinstance(choices, Mapping):
        pairs = [(str(k).strip().upper(), str(v).strip()) for k, v in choices.items()]
    else:
        pairs = [(LETTERS[i], str(c).strip()) for i, c in enumerate(list(choices)[: len(LETTERS)])]
    lines = "\n".join(f"{letter}. {text}" for letter, text in pairs)
    return f"{question.strip()}\n\n{lines}" if lines else question


MULTIPLE_CHOICE = Domain(
    name="multiple_choice",
    extract=extract_choice,
    grader="choice",
    intro="You answer multiple-choice questions carefully: exactly one of the lettered choices is correct.",
    answer_usage=(
        "The letter of the one correct choice and nothing else, for example "
        "<answer>B</answer>."
    ),
    default_tools=(),
    description="multiple choice: the answer is one letter, graded by exact letter match",
)
