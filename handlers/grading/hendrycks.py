"""Grader C of the reference: the Hendrycks MATH ``is_equiv`` string normaliser.

The reference scores its evolving loop's answers and prepares its datasets with this
rule (spec §1.6 "C"): both sides go through the steps of :func:`hendrycks_strip` and
must then be the same string. There is no numeric tolerance and no symbolic step, so
``0.50`` and ``\\frac{1}{2}`` differ while ``0.5`` and ``\\frac{1}{2}`` agree. When a
step fails on odd input (a second ``\\text{ `` unit) the raw strings are compared, as
the original does.
"""

from __future__ import annotations

import re
from typing import Final

from handlers.errors import HandlerError
from handlers.grading.reference import expand_frac_shorthand

METHOD: Final = "hendrycks"
_UNIT_MARK: Final = "\\text{ "
_SIMPLE_FRACTION: Final = re.compile(r"(-?\d+)/(-?\d+)")


class _Unnormalisable(ValueError, HandlerError):
    """A step met input it cannot rewrite; the caller compares raw text instead."""


def hendrycks_equal(answer: str | None, ground_truth: str | None) -> bool:
    """Whether the two strings agree after :func:`hendrycks_strip` (raw equality on failure)."""
    if answer is None or ground_truth is None:
        return answer is None and ground_truth is None
    try:
        return hendrycks_strip(answer) == hendrycks_strip(ground_truth)
    except _Unnormalisable:
        return answer == ground_truth


def hendrycks_strip(text: str) -> str:
    """The normalised form: the spec's steps, in its order."""
    for old, new in (
        ("\n", ""), ("\\!", ""), ("\\\\", "\\"), ("tfrac", "frac"), ("dfrac", "frac"),
        ("\\left", ""), ("\\right", ""), ("^{\\circ}", ""), ("^\\circ", ""), ("\\$", ""),
    ):
        text = text.replace(old, new)
    text = _drop_unit(text)
    text = text.replace("\\%", "").replace("%", "")
    text = text.replace(" .", " 0.").replace("{.", "{0.")
    if not text:
        return text
    if text.startswith("."):
        text = "0" + text
    text = _drop_short_assignment(text)
    text = _brace_sqrt(text).replace(" ", "")
    text = expand_frac_shorthand(text)  # the same shorthand rule as grader A's
    if text == "0.5":
        text = "\\frac{1}{2}"
    return _slash_to_frac(text)


def _drop_unit(text: str) -> str:
    """Everything from ``\\text{ `` on is a unit; more than one such mark cannot be read."""
    if _UNIT_MARK not in text:
        return text
    head, *rest = text.split(_UNIT_MARK)
    if len(rest) != 1:
        msg = "more than one unit"
        raise _Unnormalisable(msg)
    return head


def _drop_short_assignment(text: str) -> str:
    """``k = 3`` is ``3`` when the left side has at most two characters."""
    parts = text.split("=")
    if len(parts) == 2 and len(parts[0]) <= 2:
        return parts[1]
    return text


def _brace_sqrt(text: str) -> str:
    """``\\sqrt3`` becomes ``\\sqrt{3}`` (one character taken as the radicand)."""
    head, *pieces = text.split("\\sqrt")
    out = [head]
    for piece in pieces:
        if not piece:
            msg = "\\sqrt with nothing after it"
            raise _Unnormalisable(msg)
        out.append(piece if piece[0] == "{" else "{" + piece[0] + "}" + piece[1:])
    return "\\sqrt".join(out)


def _slash_to_frac(text: str) -> str:
    """``3/4`` (two plain integers, nothing else) becomes ``\\frac{3}{4}``."""
    match = _SIMPLE_FRACTION.fullmatch(text)
    if match is None or text != f"{int(match.group(1))}/{int(match.group(2))}":
        return text
    return "\\frac{" + match.group(1) + "}{" + match.group(2) + "}"
