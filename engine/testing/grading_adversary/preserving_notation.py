"""Meaning-preserving operators on notation: the same value, typeset another way.

Spaces are only added or removed next to punctuation (never between two digits, nor
between a command and a letter), so ``2 500`` or ``\\pi x`` are never made.
"""

from __future__ import annotations

import random
import re
from typing import Final

from engine.testing.grading_adversary.registry import preserving
from engine.testing.grading_adversary.shapes import (
    RELATION,
    THOUSANDS,
    WORDY,
    core,
    is_bare_value,
    is_expression,
    plain_number,
    value_like,
    variable_for,
)
from engine.testing.grading_adversary.values import HAS_DECIMAL, scalar

_PUNCTUATION: Final = "{}()[]=+,^_"
_DEGREE_FORMS: Final = ("^\\circ", "^{\\circ}", "°", "^\\circ ")
_DEGREE: Final = re.compile(r"\^\s*\{\\circ\}|\^\s*\\circ|°")


def _text_free(text: str) -> bool:
    return not re.search(r"\\(?:text\w*|mbox|mathrm|operatorname|hbox)", text)


@preserving
def spaces_added(gold: str, rng: random.Random) -> str | None:
    """``\\frac{1}{2}`` -> ``\\frac{ 1 }{ 2 }``: spaces next to braces, brackets and operators."""
    text = core(gold)
    grouped = {i for m in THOUSANDS.finditer(text) for i in range(m.start(), m.end())}
    spots = [i for i, char in enumerate(text) if char in _PUNCTUATION and text[i - 1 : i] not in ("\\", "<", ">", "!")
             and i not in grouped and not (char == "," and text[i - 1 : i].isdigit() and text[i + 1 : i + 2].isdigit())]
    if not spots or not _text_free(text) or HAS_DECIMAL.search(text):  # 4.5e+33 is one numeral
        return None
    chosen = set(rng.sample(spots, rng.randint(1, len(spots))))
    return "".join(f" {char} " if i in chosen else char for i, char in enumerate(text)).strip()


@preserving
def spaces_removed(gold: str, rng: random.Random) -> str | None:
    """``(1, 2)`` -> ``(1,2)``: spaces dropped where a neighbour is punctuation."""
    text = core(gold)
    if " " not in text or not _text_free(text):
        return None
    out = []
    for i, char in enumerate(text):
        before, after = text[i - 1 : i], text[i + 1 : i + 2]
        keep = (before.isalnum() and after.isalnum()) or before == "\\"
        if char != " " or keep:
            out.append(char)
    mutant = "".join(out)
    return mutant if mutant != text else None


@preserving
def display_fraction(gold: str, rng: random.Random) -> str | None:
    """``\\frac`` -> ``\\dfrac``."""
    text = core(gold)
    return re.sub(r"\\frac(?![a-zA-Z])", r"\\dfrac", text) if re.search(r"\\frac(?![a-zA-Z])", text) else None


@preserving
def text_fraction(gold: str, rng: random.Random) -> str | None:
    """``\\frac`` -> ``\\tfrac``."""
    text = core(gold)
    return re.sub(r"\\frac(?![a-zA-Z])", r"\\tfrac", text) if re.search(r"\\frac(?![a-zA-Z])", text) else None


@preserving
def plain_fraction(gold: str, rng: random.Random) -> str | None:
    """``\\dfrac``, ``\\tfrac`` -> ``\\frac``."""
    text = core(gold)
    return re.sub(r"\\[dt]frac", r"\\frac", text) if re.search(r"\\[dt]frac", text) else None


@preserving
def argument_braces_dropped(gold: str, rng: random.Random) -> str | None:
    """``\\frac{1}{2}`` -> ``\\frac12``, ``\\sqrt{2}`` -> ``\\sqrt2``: one-character arguments unbraced."""
    text = core(gold)
    mutant = re.sub(r"\\([dt]?frac)\{(\d)\}\{(\d)\}", r"\\\1\2\3", text)
    mutant = re.sub(r"\\sqrt\{(\d)\}", r"\\sqrt\1", mutant)
    return mutant if mutant != text else None


@preserving
def argument_braces_added(gold: str, rng: random.Random) -> str | None:
    """``\\frac12`` -> ``\\frac{1}{2}``, ``\\sqrt2`` -> ``\\sqrt{2}``."""
    text = core(gold)
    mutant = re.sub(r"\\([dt]?frac)\s*(\d)(\d)", r"\\\1{\2}{\3}", text)
    mutant = re.sub(r"\\sqrt\s*(\d)", r"\\sqrt{\1}", mutant)
    return mutant if mutant != text else None


@preserving
def left_right_added(gold: str, rng: random.Random) -> str | None:
    """``(1, 2]`` -> ``\\left(1, 2\\right]``: sizing commands on every bracket pair."""
    text = core(gold)
    if "\\left" in text or "\\sqrt[" in text or not _text_free(text):
        return None
    out, depth = [], 0
    for i, char in enumerate(text):
        escaped = text[i - 1 : i] == "\\"
        if char in "([" and not escaped:
            depth += 1
            out.append("\\left" + char)
        elif char in ")]" and not escaped:
            depth -= 1
            out.append("\\right" + char)
        else:
            out.append(char)
        if depth < 0:
            return None
    return "".join(out) if depth == 0 and "\\left" in "".join(out) else None


@preserving
def displaystyle_prefixed(gold: str, rng: random.Random) -> str | None:
    """``\\displaystyle 42``."""
    text = core(gold)
    return rng.choice(["\\displaystyle {}", "{{\\displaystyle {}}}", "\\displaystyle{{{}}}"]).format(text)


@preserving
def braces_wrapped(gold: str, rng: random.Random) -> str | None:
    """``{42}``: a group around the whole answer."""
    return "{" + core(gold) + "}"


@preserving
def dollar_delimited(gold: str, rng: random.Random) -> str | None:
    """``$42$``, ``$$42$$``."""
    text = core(gold)
    return None if "$" in text else rng.choice(["${}$", "$${}$$", "$ {} $"]).format(text)


@preserving
def paren_delimited(gold: str, rng: random.Random) -> str | None:
    """``\\(42\\)``, ``\\[42\\]``."""
    text = core(gold)
    return None if "$" in text else rng.choice(["\\({}\\)", "\\[{}\\]", "\\( {} \\)"]).format(text)


@preserving
def boxed_wrapped(gold: str, rng: random.Random) -> str | None:
    """``\\boxed{42}``."""
    return "\\boxed{" + core(gold) + "}"


@preserving
def full_stop_appended(gold: str, rng: random.Random) -> str | None:
    """``42.``: the sentence's full stop after the answer."""
    text = core(gold)
    return None if text.endswith(".") or "..." in text else text + rng.choice([".", " ."])


@preserving
def unicode_minus(gold: str, rng: random.Random) -> str | None:
    """``-4`` -> ``\u22124``: the typographic minus sign (U+2212)."""
    text = core(gold)
    return text.replace("-", "\u2212") if "-" in text and _text_free(text) else None


@preserving
def named_value(gold: str, rng: random.Random) -> str | None:
    """``42`` -> ``x = 42``: the value given a name the gold does not use."""
    text = core(gold)
    if RELATION.search(text) or not (is_expression(text) or plain_number(text) is not None):
        return None
    return f"{variable_for(text)} {rng.choice(['=', '= ', '='])} {text}".replace("  ", " ")


@preserving
def unit_added(gold: str, rng: random.Random) -> str | None:
    """``42`` -> ``42\\text{ cm}``: a unit on a plain number whose gold names none."""
    text = core(gold)
    if plain_number(text) is None:
        return None
    return text + rng.choice(["\\text{ cm}", " \\text{ meters}", "\\,\\mathrm{kg}", "\\text{ units}",
                              "\\text{ seconds}", "\\mbox{ inches}", " \\text{m}"])


@preserving
def degree_sign_rewritten(gold: str, rng: random.Random) -> str | None:
    """``45^\\circ`` -> ``45°``: another way to write the degree sign."""
    text = core(gold)
    match = _DEGREE.search(text)
    if match is None:
        return None
    form = rng.choice([f for f in _DEGREE_FORMS if f.strip() != match.group().replace(" ", "")])
    return text[: match.start()] + form + text[match.end() :]


@preserving
def plus_sign_prefixed(gold: str, rng: random.Random) -> str | None:
    """``42`` -> ``+42``: an explicit plus sign on a positive value."""
    text = core(gold)
    if not is_bare_value(text) or WORDY.search(text) or text.startswith(("-", "+")) or not value_like(text):
        return None
    value = scalar(text)
    return "+" + text if value is not None and not value.imag and value.real > 0 else None


@preserving
def absolute_value_of_positive(gold: str, rng: random.Random) -> str | None:
    """``42`` -> ``|42|``: the absolute value of a positive value is itself."""
    text = core(gold)
    value = scalar(text) if is_bare_value(text) else None
    if value is None or value.imag or value.real <= 0:
        return None
    return rng.choice(["|#|", "\\left|#\\right|", "\\lvert #\\rvert"]).replace("#", text)
