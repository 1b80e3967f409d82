"""Meaning-changing operators on the structure of the gold: intervals, sets, tuples, names.

An interval's brackets say which ends belong to it; a tuple is ordered; a set has the
elements it lists and no others; ``y = 4`` is not ``x = 4``; choice (B) is not (C).
"""

from __future__ import annotations

import math
import random
import re
from typing import Final

from engine.testing.grading_adversary.registry import changing
from engine.testing.grading_adversary.shapes import (
    INFINITY,
    Collection,
    collection,
    core,
    interval,
    letters,
    top_level_split,
    value_like,
)
from engine.testing.grading_adversary.values import differs, same_value, scalar

_MEMBERSHIP: Final = re.compile(r"^[a-zA-Z]\s*\\in\s*")
_FLIP: Final = {"(": "[", "[": "(", ")": "]", "]": ")"}
_BINDERS: Final = re.compile(
    r"\\(?:sum|prod|int|lim|mid|mapsto|to|forall|exists|binom)\b|\||:|[a-zA-Z]\s*\(\s*[a-zA-Z]\s*\)"
)
"""Sums, integrals, set-builders, f(x) = ...: renaming a bound variable changes nothing."""
_NAMES: Final = "xyztuvwabcmnpqrsk"
"""Letters used as variable names; ``e``, ``i``, ``d`` and ``o`` are left alone (constants, differentials)."""
_CHOICE: Final = re.compile(r"((?:\\(?:text|textbf|mathrm)\{)?\(?)([A-E])(\)?\}?)")


def _pair(part: str) -> Collection | None:
    found = collection(part.strip())
    return found if found is not None and len(found.items) == 2 and found.opener and not found.is_set else None


def _bounds(found: Collection) -> tuple[float, float] | None:
    values = [_endpoint(item) for item in found.items]
    return None if None in values else (values[0], values[1])  # type: ignore[return-value]


def _endpoint(item: str) -> float | None:
    if INFINITY.search(item):
        return float("-inf") if item.strip().startswith("-") else float("inf")
    value = scalar(item)
    return None if value is None or value.imag else value.real


@changing
def interval_bracket_swapped(gold: str, rng: random.Random) -> str | None:
    """``(-1, 4]`` -> ``(-1, 4)``: a finite end included or excluded (in a union, only an end no other part covers)."""
    text = core(gold)
    prefix = _MEMBERSHIP.match(text)
    head, body = (text[: prefix.end()], text[prefix.end() :]) if prefix else ("", text)
    parts = top_level_split(body, "\\cup")
    # In a union every part is an interval, "(9, 36)" too; alone, "(1, 2)" may be a point.
    intervals = [interval(part.strip()) or (_pair(part) if len(parts) > 1 else None) for part in parts]
    if None in intervals:
        return None
    bounds = [_bounds(found) for found in intervals]  # type: ignore[arg-type]
    if len(parts) > 1 and None in bounds:
        return None
    choices = []
    for index, found in enumerate(intervals):
        for side, item in enumerate(found.items):  # type: ignore[union-attr]
            if INFINITY.search(item):
                continue
            others = [b for k, b in enumerate(bounds) if k != index]
            if others and any(lo <= bounds[index][side] <= hi for lo, hi in others):  # type: ignore[index,misc]
                continue  # another part covers this end: the union would not change
            choices.append((index, side))
    if not choices:
        return None
    index, side = rng.choice(choices)
    found = intervals[index]
    opener, closer = found.opener, found.closer  # type: ignore[union-attr]
    if side == 0:
        opener = opener[:-1] + _FLIP[opener[-1]]
    else:
        closer = closer[:-1] + _FLIP[closer[-1]]
    parts[index] = opener + ", ".join(found.items) + closer  # type: ignore[union-attr]
    return head + " \\cup ".join(part.strip() for part in parts)


@changing
def set_for_interval(gold: str, rng: random.Random) -> str | None:
    """``[1, 3]`` <-> ``\\{1, 3\\}``: an interval is not the set of its two ends."""
    text = core(gold)
    found = collection(text)
    ends = [_endpoint(item) for item in found.items] if found is not None else []
    if len(ends) != 2 or None in ends or any(math.isinf(end) for end in ends) or ends[0] == ends[1]:  # type: ignore[arg-type]
        return None
    if found.is_set:
        low, high = sorted(found.items, key=_endpoint)  # type: ignore[arg-type]
        return f"[{low}, {high}]" if rng.random() < 0.5 else f"\\left[{low}, {high}\\right]"
    if found.opener.endswith("[") and found.closer.endswith("]"):
        return "\\{" + ", ".join(found.items) + "\\}"
    return None


def _distinct(items: tuple[str, ...], index: int) -> bool:
    """Item ``index`` differs from every other item, by text and by value where readable."""
    return all(
        k == index or (item.strip() != items[index].strip() and same_value(item, items[index]) is not True)
        for k, item in enumerate(items)
    )


def _listing(gold: str) -> Collection | None:
    """A set, tuple or bare list (not a surely-interval)."""
    found = collection(core(gold))
    return None if found is None or interval(core(gold)) is not None else found


@changing
def element_dropped(gold: str, rng: random.Random) -> str | None:
    """``\\{1, 2, 3\\}`` -> ``\\{1, 3\\}``: one element (found nowhere else in the list) left out."""
    found = _listing(gold)
    if found is None:
        return None
    droppable = [i for i in range(len(found.items)) if _distinct(found.items, i)]
    if not droppable:
        return None
    drop = rng.choice(droppable)
    return found.text([item for k, item in enumerate(found.items) if k != drop])


@changing
def element_added(gold: str, rng: random.Random) -> str | None:
    """``(1, 2)`` -> ``(1, 2, 7)``, ``42`` -> ``42, 7``: one more element, equal to none there."""
    text = core(gold)
    found = _listing(gold)
    items = list(found.items) if found else [text] if value_like(text) else None
    if items is None:
        return None
    taken = {round(v.real, 9) for v in map(scalar, items) if v is not None and not v.imag}
    extra = rng.choice([n for n in range(-9, 60) if n not in taken and str(n) not in items])
    items.insert(rng.randrange(len(items) + 1), str(extra))
    return found.text(items) if found else ", ".join(items)


@changing
def tuple_order_swapped(gold: str, rng: random.Random) -> str | None:
    """``(1, 2)`` -> ``(2, 1)``: a tuple is ordered."""
    found = collection(core(gold))
    if found is None or not found.opener.endswith("(") or not found.closer.endswith(")"):
        return None
    pairs = [(i, j) for i in range(len(found.items)) for j in range(i + 1, len(found.items))
             if differs(found.items[i], found.items[j])]
    if not pairs:
        return None
    i, j = rng.choice(pairs)
    items = list(found.items)
    items[i], items[j] = items[j], items[i]
    return found.text(items)


@changing
def variable_renamed(gold: str, rng: random.Random) -> str | None:
    """``x = 4`` -> ``y = 4``, ``2x+3`` -> ``2y+3``: every use of one variable renamed."""
    text = core(gold)
    if _BINDERS.search(text) or re.search(r"\\(?:text\w*|mbox|mathrm|operatorname)", text):
        return None
    used = letters(text)
    names = sorted(used & set(_NAMES))
    if not names:
        return None
    old = rng.choice(names)
    new = rng.choice([name for name in _NAMES if name not in used])
    return re.sub(rf"(?<![\\a-zA-Z]){old}(?![a-zA-Z])", new, text)


@changing
def choice_letter_changed(gold: str, rng: random.Random) -> str | None:
    """``\\text{(C)}`` -> ``\\text{(D)}``: another multiple-choice letter."""
    match = _CHOICE.fullmatch(core(gold))
    if match is None:
        return None
    letter = rng.choice([c for c in "ABCDE" if c != match.group(2)])
    return match.group(1) + letter + match.group(3)


@changing
def set_as_tuple(gold: str, rng: random.Random) -> str | None:
    """``\\{1, 2\\}`` -> ``(1, 2)``: a set written as an ordered tuple (or a point)."""
    found = collection(core(gold))
    if found is None or not found.is_set or not all(_distinct(found.items, i) for i in range(len(found.items))):
        return None
    return "(" + ", ".join(found.items) + ")"


@changing
def tuple_as_set(gold: str, rng: random.Random) -> str | None:
    """``(1, 2)`` -> ``\\{1, 2\\}``: a point (or an open interval) written as a set of numbers."""
    found = collection(core(gold))
    if found is None or not found.opener.endswith("(") or not found.closer.endswith(")"):
        return None
    return "\\{" + ", ".join(found.items) + "\\}"
