"""Meaning-changing operators that turn the gold value into a relation.

``x \\neq 42`` says what x is not; ``x < 42`` is a set of values. Neither is the value 42,
however the relation symbol is spelled.
"""

from __future__ import annotations

import random

from engine.testing.grading_adversary.registry import changing
from engine.testing.grading_adversary.shapes import (
    collection,
    core,
    interval,
    is_bare_value,
    value_like,
    variable_for,
)
from engine.testing.grading_adversary.values import scalar


def _relation(gold: str, rng: random.Random, symbols: list[str]) -> str | None:
    text = core(gold)
    if not value_like(text):
        return None
    symbol = rng.choice(symbols)
    # Without a left-hand side ("\neq 42") the relation is still not the value.
    left = variable_for(text) + " " if rng.random() < 0.8 else ""
    return f"{left}{symbol} {text}"


@changing
def not_equal_command(gold: str, rng: random.Random) -> str | None:
    """``x \\neq 42``, ``x \\ne 42``."""
    return _relation(gold, rng, ["\\neq", "\\ne"])


@changing
def not_equal_symbol(gold: str, rng: random.Random) -> str | None:
    """``x \\not= 42``, ``x ≠ 42``."""
    return _relation(gold, rng, ["\\not=", "\\not =", "≠", "\\not\\equiv"])


@changing
def strict_inequality(gold: str, rng: random.Random) -> str | None:
    """``x < 42``, ``x \\gt 42``: an inequality is a set of values."""
    return _relation(gold, rng, ["<", ">", "\\lt", "\\gt"])


@changing
def weak_inequality(gold: str, rng: random.Random) -> str | None:
    """``x \\le 42``, ``x ≥ 42``."""
    return _relation(gold, rng, ["\\le", "\\leq", "\\ge", "\\geq", "\\leqslant", "\\geqslant", "≤", "≥"])


@changing
def not_element(gold: str, rng: random.Random) -> str | None:
    """``x \\notin \\{3, 4\\}``, ``x \\not\\in \\{42\\}``: membership denied."""
    text = core(gold)
    symbol = rng.choice(["\\notin", "\\not\\in", "∉", "\\not \\in"])
    found = collection(text)
    if (found is not None and found.is_set) or interval(text) is not None:
        return f"{variable_for(text)} {symbol} {text}"
    if not value_like(text):
        return None
    return f"{variable_for(text)} {symbol} \\{{{text}\\}}"


@changing
def plus_minus_prefixed(gold: str, rng: random.Random) -> str | None:
    """``\\pm 42``: two values, one of them the negative of the gold."""
    text = core(gold)
    value = scalar(text)
    if value is None or abs(value) < 1e-12 or not is_bare_value(text):
        return None
    return rng.choice(["\\pm ", "\\pm", "\\mp ", "±"]) + text


@changing
def logical_not_prefixed(gold: str, rng: random.Random) -> str | None:
    """``\\neg 42``: a logical negation of the value."""
    text = core(gold)
    return rng.choice(["\\neg ", "\\lnot ", "¬"]) + text if value_like(text) else None
