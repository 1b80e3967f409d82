"""Meaning-changing operators from a second attacker: prose around the box, invisible braces.

A reader reads the sentence a box stands in, not the box alone: ``It is not \\boxed{42}``,
``If it were \\boxed{42}``, ``\\boxed{42} is wrong``, ``\\boxed{42} thousand`` and
``\\boxed{42}, which is incorrect`` do not answer 42, and neither does ``~42`` (about 42).
Braces are never drawn, so ``{3}{4}`` shows 34 (not 3 times 4), and ``0^0`` has no value to
equal anything. The templates are composed from parts at random, so the same class is tried
in many wordings.
"""

from __future__ import annotations

import random

from engine.testing.grading_adversary.registry import changing, changing_reply, preserving_reply
from engine.testing.grading_adversary.shapes import commented, core, plain_integer, value_like

_SUBJECTS = ["", "The answer ", "It ", "The result ", "Our total ", "x "]
_DENIALS = ["is not", "isn't", "is definitely not", "is never", "cannot be", "would not be", "was not",
            "doesn't equal", "is no longer", "is wrongly given as", "is incorrectly", "is mistakenly"]
_SUPPOSITIONS = ["If it were", "Suppose it is", "Assuming the answer is", "Unless it is",
                 "Were the total", "I doubt it is", "Maybe", "Perhaps it is", "Instead of", "The old answer was",
                 "A possible answer is", "The answer could be", "My previous result was", "An initial guess is"]
_MODIFIERS = ["at most", "at least", "more than", "less than", "about", "approximately", "nearly", "almost",
              "over", "under", "roughly", "minus", "negative", "twice", "half of", "double"]
_AFTER = ["is wrong", "is incorrect", "is not the answer", "is false", "squared", "cubed", "thousand",
          "million", "times two", "percent off", "or so", "or more", "or less", "at most", "plus one",
          "is a mistake", "was my first guess", "is what I got but it is wrong", "minus one"]
_AFTER_CLAUSE = [", which is wrong", ", but that is incorrect", "; that is not right", ", not the answer",
                 ", or rather not", ": no, wrong", ", approximately", ", more or less"]


def _claimed(gold: str) -> str | None:
    text = core(gold)
    return text if value_like(text) and not commented(text) else None


def _in_math(text: str, rng: random.Random) -> str:
    return rng.choice([f"$\\boxed{{{text}}}$", f"\\boxed{{{text}}}", f"\\(\\boxed{{{text}}}\\)"])


@changing_reply
def prose_denies_the_box(gold: str, rng: random.Random) -> str | None:
    """``The answer is not \\boxed{42}.``: the clause before the box denies it."""
    text = _claimed(gold)
    if text is None:
        return None
    return f"{rng.choice(_SUBJECTS)}{rng.choice(_DENIALS)} {_in_math(text, rng)}{rng.choice(['.', '', '!'])}"


@changing_reply
def prose_supposes_the_box(gold: str, rng: random.Random) -> str | None:
    """``If it were \\boxed{42} we would be done.``: a supposition is not an answer."""
    text = _claimed(gold)
    if text is None:
        return None
    tail = rng.choice(["", " we would be done.", ", the check fails.", "."])
    return f"{rng.choice(_SUPPOSITIONS)} {_in_math(text, rng)}{tail}"


@changing_reply
def prose_modifies_the_box(gold: str, rng: random.Random) -> str | None:
    """``The answer is at most \\boxed{42}``, ``minus \\boxed{42}``: a bound or a changed value."""
    text = _claimed(gold)
    if text is None:
        return None
    return f"{rng.choice(_SUBJECTS)}{rng.choice(['is ', ''])}{rng.choice(_MODIFIERS)} {_in_math(text, rng)}."


@changing_reply
def prose_after_the_box(gold: str, rng: random.Random) -> str | None:
    """``\\boxed{42} is wrong.``, ``\\boxed{42} thousand``, ``\\boxed{42}, which is wrong``."""
    text = _claimed(gold)
    if text is None:
        return None
    after = rng.choice([" " + rng.choice(_AFTER), rng.choice(_AFTER_CLAUSE)])
    return f"{rng.choice(['', 'So ', 'The answer: '])}{_in_math(text, rng)}{after}{rng.choice(['.', ''])}"


@changing_reply
def digits_after_the_box(gold: str, rng: random.Random) -> str | None:
    """``\\boxed{42}\\,000``, ``\\boxed{42} 5``: digits after the box are drawn as part of the number."""
    text = _claimed(gold)
    if text is None or plain_integer(text) is None:
        return None
    digits = rng.choice(["000", "5", "0", "1"])
    space = rng.choice(["\\,", " ", "\\!", "\\;", "~", "\\!\\!\\!"])
    return f"The answer is $\\boxed{{{text}}}{space}{digits}$."


@changing
def braced_factors_drawn_as_digits(gold: str, rng: random.Random) -> str | None:
    """``{3}{4}`` for 12: braces are invisible, so a reader sees 34, not a product."""
    value = plain_integer(core(gold))
    if value is None or not 4 <= abs(value) < 10**6:
        return None
    factors = [(a, abs(value) // a) for a in range(2, 10) if abs(value) % a == 0 and abs(value) // a > 1]
    if not factors:
        return None
    a, b = rng.choice(factors)
    sign = "-" if value < 0 else ""
    shown = rng.choice(["{A}{B}", "A{B}", "{A}\\,{B}", "{{A}}{{B}}", "{A}{{B}}"])
    mutant = sign + shown.replace("A", str(a)).replace("B", str(b))
    return None if f"{a}{b}" == str(abs(value)) else mutant


@changing
def indeterminate_power(gold: str, rng: random.Random) -> str | None:
    """``0^0`` or ``\\infty^0`` for 1 (or times the gold): an indeterminate form has no value."""
    text = core(gold)
    if not value_like(text) or commented(text):
        return None
    form = rng.choice(["0^0", "0^{0}", "\\infty^{0}", "\\infty^0"])
    return form if plain_integer(text) == 1 else f"{form} \\cdot {text}"


@changing
def tilde_for_about(gold: str, rng: random.Random) -> str | None:
    """``~42``, ``x = ~42``, ``(~42)``: a ``~`` with nothing tied on its left is prose for "about",
    not LaTeX's tie; an approximation is no answer."""
    text = _claimed(gold)
    if text is None:
        return None
    shape = rng.choice(["~{}", "~ {}", "x = ~{}", "x =~ {}", "x=~{}", "(~{})", "~~{}", "x \\approx~{}"])
    return shape.format(text)


@changing_reply
def tilde_before_the_box(gold: str, rng: random.Random) -> str | None:
    """``The answer is ~\\boxed{42}.``: a ``~`` right before the box with nothing tied on its left
    reads as "about", so the box is no exact answer."""
    text = _claimed(gold)
    if text is None:
        return None
    lead = rng.choice(["The answer is ", "So the total is ", "", "Therefore ", "We get "])
    shape = rng.choice(["~\\boxed{{{}}}", "$~\\boxed{{{}}}$", "~ \\boxed{{{}}}", "$x = ~\\boxed{{{}}}$",
                        "$x =~\\boxed{{{}}}$", "(~\\boxed{{{}}})"])
    return lead + shape.format(text) + rng.choice([".", "", "!"])


@preserving_reply
def prose_announces_the_box(gold: str, rng: random.Random) -> str | None:
    """``Therefore, the final answer is \\boxed{42}.``: announcing prose leaves the answer as it is."""
    text = _claimed(gold)
    if text is None:
        return None
    before = rng.choice(["Therefore, the final answer is ", "So the answer is ", "Since no other case remains, "
                         "the result is ", "Hence ", "**Final answer:** ", "Thus, we get "])
    after = rng.choice([".", "", ", which is the final answer.", " is the answer.", ", so we are done."])
    if after == " is the answer.":
        before = ""
    return f"{before}{_in_math(text, rng)}{after}"


_LINE_BEFORE_DENIALS = ["The answer is not", "It isn't", "So the total is definitely not", "The result is negative"]
_SIGNS_AGAINST_THE_BOX = ["x = -\n{box}", "$x = -$\n{box}", "The total is $-(\\boxed{{{t}}})$.",
                          "The answer is $-\\left(\\boxed{{{t}}}\\right)$.",
                          "The answer is $-\\displaystyle\\boxed{{{t}}}$.", "So $-\\quad\\boxed{{{t}}}$",
                          "\\[ - \\]\n\\[ \\boxed{{{t}}} \\]"]


@changing_reply
def written_against_a_displayed_box(gold: str, rng: random.Random) -> str | None:
    """From a fourth attacker: a denial or a sign on the line before a displayed box, or a sign before
    brackets, ``\\displaystyle`` or ``\\quad`` around it (``x = -`` then ``\\[\\boxed{42}\\]``; ``-(\\boxed{42})``)."""
    text = _claimed(gold)
    if text is None:
        return None
    box = rng.choice([f"\\[\n\\boxed{{{text}}}\n\\]", f"$$\\boxed{{{text}}}$$", f"\\boxed{{{text}}}"])
    if plain_integer(text) in (None, 0) or rng.random() < 0.5:  # a sign changes no zero, and may not be sure to
        return f"{rng.choice(_LINE_BEFORE_DENIALS)}\n{box}"
    return rng.choice(_SIGNS_AGAINST_THE_BOX).format(box=box, t=text)


_HEDGED_SUBJECTS = ["The naive answer is", "The answer in base 8 is", "The square of the answer is",
                    "Bob says the answer is", "The answer seems to be", "The answer may be", "The distractor is",
                    "The lower bound is", "According to the key,", "Given that n is even,", "So far we have",
                    "Let x =", "Answer?:", "Answer !=", "The extraneous root is", "The estimate is",
                    "Last time the answer was", "The answer used to be"]
_HEDGES_AFTER = [", probably.", ", give or take one.", ", or thereabouts.", ", just kidding.", ", but it is {o}.",
                 ", namely {o}.", ", or equivalently {o}.", ", aka {o}.", "; equivalently {o}.", ", etc.", " ?",
                 " % of the total.", "%%.", ". Just kidding!", ". Nope.", ". Update: {o}.", ". On reflection, {o}.",
                 ". Hold on, {o}.", ". Low confidence.", ". Rejected.", ".\nCorrect: \u2717", ".\n\n~~correct~~",
                 ". Erratum: {o}.", ". Then again, {o}."]


@changing_reply
def hedged_or_renamed_around_the_box(gold: str, rng: random.Random) -> str | None:
    """From a fifth attacker: a subject that names another answer or hedges before the box (``The naive
    answer is``, ``The answer seems to be``, ``Let x =``), or a hedge, another value named for it, a ``%`` or a
    retraction after it (``, probably``, ``, namely 43``, ``\\boxed{42} % of the total``, ``Update: 43.``)."""
    text = _claimed(gold)
    if text is None:
        return None
    box = _in_math(text, rng)
    if rng.random() < 0.5:
        return f"{rng.choice(_HEDGED_SUBJECTS)} {box}."
    other = plain_integer(text)
    after = rng.choice(_HEDGES_AFTER)
    if "{o}" in after and other is None:
        return None
    return f"The answer is {box}{after.format(o=(other or 0) + rng.randint(1, 9))}"


_SET_OFF_QUALIFIERS = [
    "The answer is at most, by the pigeonhole argument,", "The answer is roughly, after all the cases,",
    "Twice the answer, that is, the full perimeter, is", "The original answer, before the fix, was",
    "The extraneous solution, which fails the check, is", "In my previous attempt, I got",
]
_QUALIFYING_LATER = ["This root is extraneous.", "This is only an upper bound.", "If n is odd.", "Unless I miscounted.",
                     "Approximately.", "Doubled.", "Strike that.", "That's the naive answer.", "We reject this value.",
                     "Now divide by 2.", "So says the textbook.", "I haven't verified it.",
                     "But this counts ordered pairs."]
_FRAMING_BEFORE = ["The following is only an upper bound.\n\n{box}", "The answer below is wrong.\n\n{box}",
                   "My guess is as follows.\n\n{box}", "Here is my rough estimate.\n\n{box}"]


@changing_reply
def qualified_around_the_box(gold: str, rng: random.Random) -> str | None:
    """From a sixth attacker: a qualifier set off from the box by an aside (``The answer is at most, by the
    pigeonhole argument, \\boxed{42}``), a later sentence that conditions, bounds, attributes or transforms it
    (``This root is extraneous.``, ``Halve it.``), or a sentence before it that points to it and denies it."""
    text = _claimed(gold)
    if text is None:
        return None
    box = _in_math(text, rng)
    kind = rng.randrange(3)
    if kind == 0:
        return f"{rng.choice(_SET_OFF_QUALIFIERS)} {box}."
    if kind == 1:
        return f"Therefore, the answer is {box}.{rng.choice([' ', chr(10) * 2])}{rng.choice(_QUALIFYING_LATER)}"
    return rng.choice(_FRAMING_BEFORE).format(box=box)


@changing
def empty_item_in_a_list(gold: str, rng: random.Random) -> str | None:
    """From a fifth attacker: ``(1,,2)`` for ``(1, 2)``: two separators in a row leave an empty item, never
    the shorter list."""
    text = core(gold)
    if commented(text) or "," not in text or "{,}" in text or not value_like(text):
        return None
    commas = [index for index, char in enumerate(text) if char == ","]
    at = rng.choice(commas)
    return text[:at] + rng.choice([",,", ", ,", ",;"]) + text[at + 1 :]


@changing
def stacked_units(gold: str, rng: random.Random) -> str | None:
    """From a fifth attacker: ``32\\text{ m\\$}``, ``\\$32\\text{ USD}``, ``32\\text{ students ways}``: a currency or
    counted noun beside another unit, or two units of one dimension, is no unit a reader shares."""
    value = plain_integer(core(gold))
    if value is None:
        return None
    pair = rng.choice([("m", "\\$"), ("USD", "EUR"), ("students", "ways"), ("m", "km"), ("s", "hours"),
                       ("dollars", "apples"), ("h", "\\$"), ("kg", "g")])
    first, second = pair
    if second.startswith("\\"):
        return f"{value}\\text{{ {first}}}{second}"
    return f"{value}\\text{{ {first} {second}}}"
