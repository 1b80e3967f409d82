"""The multiple-choice grader: the same letter on both sides, after normalisation.

Models write the letter in many ways (``(b)``, ``B.``, ``answer: b``, ``\\boxed{B}``,
``B) 12``); :func:`normalise_choice` maps them all to ``B`` and refuses anything that
is not clearly one letter, so a rambling answer never matches by accident.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from handlers.ports import Grade

LETTERS: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_PREFIX = re.compile(
    r"^\s*(?:(?:the\s+)?(?:final\s+)?(?:correct\s+)?(?:answer|choice|option)(?:\s+is)?\s*[:=\-]?\s*)+",
    re.IGNORECASE,
)
_WRAPPERS = re.compile(r"^\\(?:boxed|fbox|text|textbf|mathrm)\s*\{(.*)\}$", re.DOTALL)
_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
_LETTER = re.compile(r"^[(\[]?([A-Za-z])[)\]]?(?:[.):\]]|\s|$)")


def normalise_choice(text: str | None) -> str | None:
    """The choice letter ``text`` stands for, upper case, or ``None``.

    ``"(b)"``, ``"B."``, ``"answer: b"``, ``"\\boxed{B}"`` and ``"B) 12"`` all give
    ``"B"``; ``""``, ``"12"`` and ``"none of these"`` give ``None``.
    """
    if text is None:
        return None
    value = text.strip().strip("$").strip()
    if len(_BOX.findall(value)) > 1:
        return None  # several boxed letters: a hedge, not a choice
    for _ in range(3):
        unwrapped = _WRAPPERS.match(value)
        if unwrapped is None:
            break
        value = unwrapped.group(1).strip()
    value = _PREFIX.sub("", value).strip()
    found = _LETTER.match(value)
    if found is None:
        return None
    rest = value[found.end():].strip()
    if rest and len(value) > 2 and value[1].isspace() and rest[0] not in "-:(=":
        # "a cat", "b is wrong": a word, not a labelled choice.
        return None
    return found.group(1).upper()


def grade_choice(answer: str, ground_truth: str, metadata: Mapping[str, Any]) -> Grade:
    """1 when both sides name the same letter after normalisation."""
    expected = normalise_choice(ground_truth)
    if expected is None:
        expected = _letter_of_choice_text(ground_truth, metadata.get("choices"))
    if expected is None:
        return Grade(score=0.0, method="choice", detail=f"ground truth {ground_truth[:40]!r} is not a choice letter")
    given = normalise_choice(answer)
    if given is None:
        return Grade(score=0.0, method="choice", detail=f"answer {answer[:40]!r} is not a choice letter")
    return Grade(score=float(given == expected), method="choice", detail=f"{given} vs {expected}")


def _letter_of_choice_text(ground_truth: str, choices: object) -> str | None:
    """A ground truth written as the choice's text (``"12"``) rather than its letter."""
    if not isinstance(choices, list):
        return None
    for index, choice in enumerate(choices[: len(LETTERS)]):
        if str(choice).strip() == ground_truth.strip():
            return LETTERS[index]
    return None
