"""The multiple-choice grader: the same letter on both sides, read by a closed grammar.

Models write the letter in many ways (``(b)``, ``B.``, ``answer: b``, ``\\boxed{B}``), and
sometimes with the choice's text after it (``B) 12``). What is read is closed, so nothing
written with the letter is dropped unread:

- wrappers around the whole answer: ``$``, ``\\boxed{}``, ``\\fbox{}``, ``\\text{}``,
  ``\\textbf{}``, ``\\mathrm{}``, ``\\mathbf{}``, Markdown's ``**bold**``;
- a leading announcement: ``answer:``, ``the correct choice is``, ``option``...;
- the label: ``B``, ``(B)``, ``[B]``, ``B)``, ``B.``, ``B:``, then at most a full stop;
- after a label with a delimiter, the text of that same choice (``B) 12`` when choice B is
  ``12``), checked against the problem's ``choices``. Text that is not that choice's (``A
  (wrong)``, ``A. Actually B``, ``(A) or (B)``), or any text when the choices are unknown,
  leaves the answer unread: a score of 1 needs the letter and nothing that contradicts it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, NamedTuple

from handlers.ports import Grade

LETTERS: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_PREFIX = re.compile(
    r"^\s*(?:(?:the\s+)?(?:final\s+)?(?:correct\s+)?(?:answer|choice|option)(?:\s+is)?\s*[:=\-]?\s*)+",
    re.IGNORECASE,
)
_WRAPPERS = re.compile(r"^\\(?:boxed|fbox|text|textbf|mathrm|mathbf)\s*\{(.*)\}$", re.DOTALL)
_BOLD = re.compile(r"\*\*(.+)\*\*", re.DOTALL)
"""Markdown bold around the whole answer (``**B**``): it changes how the label looks, not which it is."""
_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
_LABEL = re.compile(r"\((?P<paren>[A-Za-z])\)|\[(?P<bracket>[A-Za-z])\]|(?P<bare>[A-Za-z])(?P<mark>[.):\]]?)")
_SPACES = re.compile(r"\s+")


class Label(NamedTuple):
    """A choice label as written: its upper-case letter, and the text written after it."""

    letter: str
    rest: str
    """What follows the label (a final full stop removed); empty for a bare label."""
    delimited: bool
    """Whether the label is marked off from what follows (``(B)``, ``B)``, ``B.``), so the
    rest may be the choice's text; a bare ``B 12`` is a letter and a number, not a label."""


def read_label(text: str | None) -> Label | None:
    """The label ``text`` starts with, after its wrappers and announcement; ``None`` if none.

    ``"(b)"``, ``"B."``, ``"answer: b"`` and ``"\\boxed{B}"`` give ``B`` with nothing after it;
    ``"B) 12"`` gives ``B`` with ``12`` after it.
    """
    if text is None:
        return None
    value = text.strip().strip("$").strip()
    if len(_BOX.findall(value)) > 1:
        return None  # several boxed letters: a hedge, not a choice
    for _ in range(3):
        unwrapped = _WRAPPERS.match(value) or _BOLD.fullmatch(value)
        if unwrapped is None:
            break
        value = unwrapped.group(1).strip().strip("$").strip()
    value = _PREFIX.sub("", value).strip()
    found = _LABEL.match(value)
    if found is None:
        return None
    letter = found.group("paren") or found.group("bracket") or found.group("bare")
    rest = value[found.end():]
    delimited = found.group("bare") is None or bool(found.group("mark"))
    if rest and not rest[0].isspace() and not delimited:
        return None  # "AB", "A+B", "a2": the letter is part of something longer
    rest = rest.strip()
    if rest == ".":
        rest = ""
    return Label(letter.upper(), rest, delimited)


def normalise_choice(text: str | None, choices: object = None) -> str | None:
    """The choice letter ``text`` stands for, upper case, or ``None`` when it is not clearly one.

    A label alone (``(b)``, ``B.``, ``\\boxed{B}``) is its letter. A label followed by text is
    its letter only when the text is that choice's own (``choices`` a list in letter order or
    a ``{letter: text}`` mapping); anything else after a label, or text when ``choices`` is
    unknown, gives ``None``.
    """
    label = read_label(text)
    if label is None:
        return None
    if not label.rest:
        return label.letter
    if not label.delimited:
        return None
    own = choice_text(choices, label.letter)
    return label.letter if own is not None and _same_text(label.rest, own) else None


def choice_text(choices: object, letter: str) -> str | None:
    """The text of choice ``letter`` among ``choices`` (a list in letter order or a mapping)."""
    if isinstance(choices, Mapping):
        for key, value in choices.items():
            if str(key).strip().upper() == letter:
                return str(value)
        return None
    if isinstance(choices, list):
        index = LETTERS.find(letter)
        return str(choices[index]) if 0 <= index < len(choices) else None
    return None


def _same_text(written: str, own: str) -> bool:
    """The text after a label is the choice's own, up to spacing, ``$`` and a final full stop."""
    def plain(text: str) -> str:
        return _SPACES.sub("", text.strip().strip("$").removesuffix("."))

    return bool(plain(own)) and plain(written) == plain(own)


def grade_choice(answer: str, ground_truth: str, metadata: Mapping[str, Any]) -> Grade:
    """1 when both sides name the same letter, each read by :func:`normalise_choice`."""
    choices = metadata.get("choices")
    expected = normalise_choice(ground_truth, choices)
    if expected is None:
        expected = _letter_of_choice_text(ground_truth, choices)
    if expected is None:
        return Grade(score=0.0, method="choice", detail=f"ground truth {ground_truth[:40]!r} is not a choice letter")
    given = normalise_choice(answer, choices)
    if given is None:
        label = read_label(answer)
        if label is not None and label.rest and label.delimited:
            why = "is not that choice's text" if choice_text(choices, label.letter) is not None else (
                "cannot be checked: the problem lists no choices")
            return Grade(score=0.0, method="choice",
                         detail=f"answer {answer[:40]!r}: the text after {label.letter} {why}")
        return Grade(score=0.0, method="choice", detail=f"answer {answer[:40]!r} is not a choice letter")
    return Grade(score=float(given == expected), method="choice", detail=f"{given} vs {expected}")


def _letter_of_choice_text(ground_truth: str, choices: object) -> str | None:
    """A ground truth written as the choice's text (``"12"``) rather than its letter."""
    for letter in LETTERS:
        text = choice_text(choices, letter)
        if text is not None and text.strip() == ground_truth.strip():
            return letter
    return None
