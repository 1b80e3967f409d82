"""Meaning-changing operators made of words and marks written next to the gold.

A word that denies, bounds, scales or qualifies the value makes a different claim; a
grader that takes unknown words for units (and drops them) scores these 1.
"""

from __future__ import annotations

import random

from engine.testing.grading_adversary.registry import changing
from engine.testing.grading_adversary.shapes import (
    core,
    is_bare_value,
    plain_integer,
    plain_number,
    single_term,
    value_like,
)
from engine.testing.grading_adversary.values import clearly_differs, scalar


@changing
def denial_in_text(gold: str, rng: random.Random) -> str | None:
    """``42\\text{ is incorrect}``: words in ``\\text{}`` deny the value."""
    text = core(gold)
    phrase = rng.choice([" is incorrect", " is wrong", " is not correct", " (wrong)", " is false"])
    return f"{text}\\text{{{phrase}}}" if value_like(text) else None


@changing
def denial_in_other_macro(gold: str, rng: random.Random) -> str | None:
    """``42 \\mbox{ is not the answer}``: the denial in another text command."""
    text = core(gold)
    macro = rng.choice(["\\mbox", "\\textrm", "\\textnormal", "\\textit", "\\hbox", "\\textsf"])
    phrase = rng.choice([" is not the answer", " is incorrect", " (not the answer)"])
    return f"{text} {macro}{{{phrase}}}" if value_like(text) else None


@changing
def denial_in_bare_words(gold: str, rng: random.Random) -> str | None:
    """``42 is wrong``: the denial as plain words, no text command."""
    text = core(gold)
    phrase = rng.choice(["is wrong", "is not the answer", "is incorrect", "(incorrect)"])
    return f"{text} {phrase}" if value_like(text) else None


@changing
def negation_prefixed(gold: str, rng: random.Random) -> str | None:
    """``\\text{not } 42``: the value negated in words before it."""
    text = core(gold)
    word = rng.choice(["\\text{not }", "\\text{not} ", "\\mbox{not }", "not "])
    return word + text if value_like(text) else None


@changing
def bound_words(gold: str, rng: random.Random) -> str | None:
    """``\\text{at least } 42``, ``42\\text{ or more}``: a bound, not the value."""
    text = core(gold)
    if not value_like(text):
        return None
    if rng.random() < 0.5:
        return rng.choice(["\\text{at least }", "\\text{at most }", "\\text{more than }", "\\text{up to }"]) + text
    return text + rng.choice(["\\text{ or more}", "\\text{ or less}", "\\text{ at most}", "\\text{ or fewer}"])


@changing
def words_inside_text(gold: str, rng: random.Random) -> str | None:
    """``\\text{42 is not the answer}``: the number itself inside a sentence in ``\\text{}``."""
    text = core(gold)
    if plain_number(text) is None:
        return None
    template = rng.choice(["{} is not the answer", "not {}", "{} is wrong", "at least {}", "{} or more"])
    return "\\text{" + template.format(text) + "}"


@changing
def approximation_prefixed(gold: str, rng: random.Random) -> str | None:
    """``\\approx 42``: an approximation of an exact gold (no decimals in it) is not the value."""
    text = core(gold)
    if "." in text or not is_bare_value(text):
        return None
    return rng.choice(["\\approx ", "\\approx", "\\sim ", "\\simeq ", "≈", "\\text{about } ", "about ",
                       "\\text{approximately } "]) + text


@changing
def power_word_appended(gold: str, rng: random.Random) -> str | None:
    """``12 squared``, ``5\\text{ cubed}``: the word raises the value to a power."""
    text, value = core(gold), scalar(core(gold))
    if value is None or not single_term(text) or not is_bare_value(text):
        return None
    word, power = rng.choice([("squared", 2), ("cubed", 3)])
    if not clearly_differs(text, f"({text})^{power}"):
        return None  # 0 and 1 squared are themselves
    return f"{text} {word}" if rng.random() < 0.5 else f"{text}\\text{{ {word}}}"


@changing
def factorial_word_appended(gold: str, rng: random.Random) -> str | None:
    """``5 factorial``: the word takes the factorial (n = 1, 2 are their own factorials)."""
    number = plain_integer(core(gold))
    if number is None or number in (1, 2) or not 0 <= number <= 170:
        return None
    return core(gold) + rng.choice([" factorial", "\\text{ factorial}", "\\mbox{ factorial}"])


@changing
def multiplier_word_appended(gold: str, rng: random.Random) -> str | None:
    """``7\\text{ hundred}``, ``3 dozen``: the word multiplies the value."""
    text = core(gold)
    number = plain_number(text)
    if number is None or number == 0:
        return None
    word = rng.choice(["hundred", "thousand", "million", "billion", "dozen"])
    return f"{text}\\text{{ {word}}}" if rng.random() < 0.6 else f"{text} {word}"


@changing
def ellipsis_appended(gold: str, rng: random.Random) -> str | None:
    """``42\\ldots``: digits go on after a whole number, so the value is not the gold's."""
    text = core(gold)
    if plain_integer(text) is None:
        return None
    return text + rng.choice(["\\ldots", "\\dots", "...", "\\cdots", "…"])


@changing
def prime_appended(gold: str, rng: random.Random) -> str | None:
    """``42'``, ``42^\\prime``: a prime marks minutes, feet or a derivative, not the number."""
    text = core(gold)
    if plain_number(text) is None or text.endswith("."):
        return None
    return text + rng.choice(["'", "''", "^\\prime", "^{\\prime}", "\u2032"])


@changing
def struck_out(gold: str, rng: random.Random) -> str | None:
    """``\\cancel{42}``: a struck-out value is withdrawn, not given."""
    text = core(gold)
    if not value_like(text):
        return None
    return rng.choice(["\\cancel", "\\bcancel", "\\xcancel", "\\sout", "\\st"]) + "{" + text + "}"
