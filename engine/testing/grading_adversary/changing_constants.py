"""Meaning-changing operators that bring a constant (``i``, ``e``, ``\\pi``) into the value.

A grader that strips ``\\mathrm{...}`` or unknown commands reads ``3 + 2\\mathrm{i}`` as
``3 + 2``; the imaginary unit, Euler's number and pi are values, not decoration.
"""

from __future__ import annotations

import random

from engine.testing.grading_adversary.registry import changing
from engine.testing.grading_adversary.shapes import core, is_bare_value, plain_integer, single_term
from engine.testing.grading_adversary.values import scalar

_IMAGINARY = ["\\mathrm{i}", "i", "\\,\\mathrm{i}", "\\,i", "\\mathrm{i}"]


def _nonzero_real_term(text: str) -> bool:
    """A single term whose value is a real number other than 0 (0 times a constant is 0)."""
    value = scalar(text)
    if value is None or value.imag or abs(value.real) < 1e-12:
        return False
    return single_term(text) and is_bare_value(text)


@changing
def imaginary_split(gold: str, rng: random.Random) -> str | None:
    """``5`` -> ``3 + 2\\mathrm{i}``: a sum whose second part is imaginary."""
    text = core(gold)
    number = plain_integer(text)
    if number is None or number < 2:
        return None
    real = rng.randrange(1, number) if number < 10**6 else number // 2
    unit = rng.choice(_IMAGINARY)
    if rng.random() < 0.75:
        return f"{real} + {number - real}{unit}"
    return f"{number - real}{unit} + {real}"


@changing
def imaginary_factor(gold: str, rng: random.Random) -> str | None:
    """``\\sqrt{2}`` -> ``\\sqrt{2}\\,\\mathrm{i}``: the value times the imaginary unit."""
    text = core(gold)
    return text + rng.choice(_IMAGINARY) if _nonzero_real_term(text) else None


@changing
def euler_factor(gold: str, rng: random.Random) -> str | None:
    """``2`` -> ``2\\mathrm{e}``: the value times Euler's number."""
    text = core(gold)
    if not _nonzero_real_term(text):
        return None
    return text + rng.choice(["\\mathrm{e}", "\\,e", " e", "\\,\\mathrm{e}", "\\cdot e"])


@changing
def pi_factor(gold: str, rng: random.Random) -> str | None:
    """``2`` -> ``2\\pi``: the value times pi."""
    text = core(gold)
    if not _nonzero_real_term(text):
        return None
    return text + rng.choice(["\\pi", " \\pi", "\\,\\pi", "π"]) if rng.random() < 0.8 else "\\pi " + text


@changing
def styled_constant_factor(gold: str, rng: random.Random) -> str | None:
    """``2\\operatorname{e}``, ``2\\mathit{i}``: a constant written with a font command."""
    text = core(gold)
    if not _nonzero_real_term(text):
        return None
    return text + rng.choice(["\\operatorname{e}", "\\operatorname{i}", "\\mathit{e}", "\\mathsf{i}", "\\mathbf{i}",
                              "\\,\\operatorname{e}", "\\boldsymbol{\\pi}", "\\mathrm{\\pi}"])
