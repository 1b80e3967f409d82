"""Meaning-changing operators on units, angles, currencies and percent.

Only golds that carry the unit themselves are mutated: ``5\\text{ cm}`` -> ``5\\text{ m}``
differs, but a bare ``42`` says nothing about its unit, so ``42\\text{ m}`` is left to the
preserving operators.
"""

from __future__ import annotations

import random
import re
from typing import Final

from engine.testing.grading_adversary.registry import changing
from engine.testing.grading_adversary.shapes import core, is_bare_value
from engine.testing.grading_adversary.values import scalar

_OTHER_UNIT: Final = {
    "mm": ["cm", "m"], "cm": ["m", "mm", "km"], "m": ["cm", "km", "mm"], "km": ["m", "mi"],
    "meters": ["centimeters", "kilometers", "feet"], "meter": ["centimeter", "foot"],
    "centimeters": ["meters", "inches"], "inches": ["feet", "centimeters"], "inch": ["foot", "centimeter"],
    "feet": ["inches", "meters"], "foot": ["inch", "meter"], "miles": ["kilometers", "feet"],
    "cents": ["dollars", "euros"], "dollars": ["cents", "euros"], "yuan": ["dollars", "euros"],
    "s": ["min", "ms"], "seconds": ["minutes", "hours"], "minutes": ["seconds", "hours"],
    "hours": ["minutes", "days"], "days": ["hours", "weeks"], "years": ["months", "days"],
    "kg": ["g", "lb"], "g": ["kg", "mg"], "grams": ["kilograms", "pounds"], "pounds": ["kilograms", "ounces"],
    "mph": ["km/h"], "K": ["°C"],
    "J": ["kJ", "eV"], "eV": ["keV", "J"], "Hz": ["kHz"], "W": ["kW"], "N": ["kN"], "Pa": ["kPa"],
}
_UNIT_IN_TEXT: Final = re.compile(r"(\\(?:text|mbox|mathrm|textnormal|textrm)\{\s*~?\s*)([A-Za-z]+)(\s*\})")
_DEGREES: Final = re.compile(r"\^\s*\{?\\circ\}?|°|\\degree|\\text\{\s*degrees\}")
_MONEY: Final = re.compile(r"\\\$\s*")


@changing
def unit_swapped(gold: str, rng: random.Random) -> str | None:
    """``5\\text{ cm}`` -> ``5\\text{ m}``: another unit of the same kind (a different amount)."""
    text = core(gold)
    matches = [m for m in _UNIT_IN_TEXT.finditer(text) if m.group(2) in _OTHER_UNIT]
    if len(matches) != 1 or _value_before(text, matches[0].start()) in (None, 0):
        return None
    match = matches[0]
    return text[: match.start(2)] + rng.choice(_OTHER_UNIT[match.group(2)]) + text[match.end(2) :]


@changing
def radians_for_degrees(gold: str, rng: random.Random) -> str | None:
    """``45^\\circ`` -> ``45\\text{ rad}``: the number kept, degrees turned into radians."""
    text = core(gold)
    match = _DEGREES.search(text)
    if match is None or _value_before(text, match.start()) in (None, 0):
        return None
    return text[: match.start()].rstrip() + rng.choice(["\\text{ rad}", " \\mathrm{rad}", "\\text{ radians}", " rad"])


@changing
def degrees_for_radians(gold: str, rng: random.Random) -> str | None:
    """``\\frac{\\pi}{6}`` -> ``\\frac{\\pi}{6}^\\circ``: an angle in radians written in degrees."""
    text = core(gold)
    value = scalar(text)
    if "\\pi" not in text or not is_bare_value(text) or value is None or abs(value) < 1e-12:
        return None
    form = rng.choice(["#^\\circ", "#^{\\circ}", "#°", "#\\text{ degrees}", "\\left(#\\right)^\\circ"])
    return form.replace("#", text)


@changing
def currency_swapped(gold: str, rng: random.Random) -> str | None:
    """``\\$42`` -> ``€42``: the same number of another currency."""
    text = core(gold)
    if not _MONEY.match(text) or _value_before(text, len(text)) is None:
        return None
    amount = _MONEY.sub("", text, count=1)
    form = rng.choice(["€#", "£#", "\\pounds #", "¥#", "#\\text{ EUR}", "\\text{€}#", "#\\text{ yen}", "#¢",
                       "#\\text{ cents}"])
    return form.replace("#", amount)


@changing
def percent_for_money(gold: str, rng: random.Random) -> str | None:
    """``\\$42`` -> ``42\\%``: a percentage is not an amount of money."""
    text = core(gold)
    if not _MONEY.match(text) or _value_before(text, len(text)) is None:
        return None
    amount = _MONEY.sub("", text, count=1)
    return amount + rng.choice(["\\%", "\\ \\%", "\\text{ percent}"])  # a bare % starts a comment


def _value_before(text: str, end: int) -> float | None:
    """The number written before a unit, with any currency sign and grouping removed (None if none)."""
    head = re.sub(r"\\\$|,\\!|\{,\}|,|\\,", "", text[:end]).strip()
    value = scalar(head) if head else None
    return None if value is None or value.imag else value.real


_LENGTHS: Final = frozenset({"mm", "cm", "m", "km", "inches", "inch", "feet", "foot", "meters", "meter",
                             "centimeters", "miles", "units"})
_POWER_AFTER: Final = re.compile(r"\s*\^\s*(\{-?\d+\}|\d)")


@changing
def unit_power_changed(gold: str, rng: random.Random) -> str | None:
    """``15\\text{ cm}^2`` -> ``15\\text{ cm}^3``: an area is not a volume (or a length)."""
    text = core(gold)
    matches = [m for m in _UNIT_IN_TEXT.finditer(text) if m.group(2) in _LENGTHS]
    if len(matches) != 1 or _value_before(text, matches[0].start()) in (None, 0):
        return None
    end = matches[0].end()
    power = _POWER_AFTER.match(text, end)
    current = power.group(1).strip("{}") if power else "1"
    new = rng.choice([p for p in ("1", "2", "3", "-1") if p != current])
    written = "" if new == "1" else f"^{{{new}}}" if new.startswith("-") else f"^{new}"
    return text[:end] + written + text[power.end() if power else end :]
