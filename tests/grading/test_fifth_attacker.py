"""A fifth attacker's classes: what the grader still dropped, or read past, that a reader sees.

Found by probing the grader with about 57,000 fresh wrong answers and whole replies (LaTeX decorations,
Unicode, words, bases, grouping, units, relations, structures, functions and about 400 reply shapes)
against golds of AIME, AMC, MATH-500, Minerva and GSM8K, written before reading the earlier attackers'
tests. Each class scored 1 before its fix:

- an empty list item dropped: ``(1,,2)`` read as the pair (1, 2), ``\\{1,,2\\}`` as {1, 2};
- units stacked side by side read as a product and then allowed against a bare gold: ``32\\text{ m\\$}``
  (32 million dollars?) as 32, ``\\$32\\text{ USD}``, ``32\\text{ students ways}``, ``32\\text{ m m}``;
- the Ogham space mark (U+1680), white space to Unicode but drawn as a dash, read as a space;
- in a reply, a ``%`` right after the box (``\\boxed{42} % of the total``, ``\\boxed{42}%%``) masked as a
  LaTeX comment, though Markdown shows it;
- a question mark after a space (``The answer is \\boxed{42} ?``);
- a subject that names the answer with other words (``The naive answer is``, ``The answer in base 8 is``,
  ``The square of the answer is``, ``Alice says the answer is``, ``Answer?:``) and hedging or supposing words
  before the box (``The answer seems to be``, ``may be``, ``used to be``, ``The distractor is``, ``The lower bound
  is``, ``According to Bob``, ``Let x =``, ``Given that n is even``);
- clauses after the box's comma that hedge or rename it (``\\boxed{42}, probably``, ``, give or take one``,
  ``, but it is 43``, ``, namely 43``, ``, or equivalently 43``, ``, etc.``) and plain-text "not equal"
  before it (``Answer != \\boxed{42}``, ``=/=``);
- later sentences that take the box back in words off the earlier lists (``Just kidding!``, ``Nope.``,
  ``Update: 43.``, ``On reflection, 43.``, ``Hold on, 43.``, ``Low confidence.``, ``Rejected.``), with a
  rejecting mark (``Correct: \\u2717``) or struck through in Markdown (``~~correct~~``).

Each class is pinned here, generated with hypothesis, and the reply classes are the adversary operator
``hedged_or_renamed_around_the_box`` (``changing_prose.py``).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handlers.grading import extract_final_answer, grade_answer

WRONG = [
    ("(1,,2)", "(1,2)", "an empty item: a triple with a gap, never the pair"),
    ("1,,2", "1,2", "an empty item"),
    ("\\{1,,2\\}", "\\{1,2\\}", "an empty item in a set"),
    ("[1,,2]", "[1,2]", "an empty item in an interval"),
    ("(1,;2)", "(1,2)", "two separators in a row"),
    ("32\\text{ m\\$}", "32", "m$ is million dollars to many readers"),
    ("\\$32\\text{ m}", "32", "a currency beside another unit"),
    ("\\$32\\text{ USD}", "32", "a currency written twice"),
    ("32\\text{ USD EUR}", "32", "two currencies"),
    ("32\\text{ students ways}", "32", "two counted nouns"),
    ("32\\text{ m m}", "32", "a unit written twice"),
    ("32\\text{ h\\$}", "32", "a currency beside a time"),
    ("\u168032", "32", "the Ogham space mark is drawn as a dash"),
    ("32\u1680", "32", "the Ogham space mark is drawn"),
]

RIGHT = [
    ("(1,2)", "(1,2)"),
    ("1, 2, and 3", "1,2,3"),
    ("1, or 2", "1,2"),
    ("32\\text{ N m}", "32\\text{ N m}"),
    ("32\\text{ kW h}", "32"),
    ("\\$32", "32"),
    ("32\\text{ dollars}", "\\$32"),
    ("32\\text{ students}", "32"),
    ("32\\text{ cm}^2", "32"),
    ("32\u2009000", "32000"),
]


@pytest.mark.parametrize(("answer", "gold", "why"), WRONG, ids=[row[0] for row in WRONG])
def test_a_wrong_answer_of_each_class_scores_zero(answer: str, gold: str, why: str) -> None:
    """An empty list item, stacked units and a drawn space mark score zero."""
    grade = grade_answer(answer, gold)
    assert grade.score == 0.0, f"{why}: {grade.detail}"


@pytest.mark.parametrize(("answer", "gold"), RIGHT, ids=[row[0] for row in RIGHT])
def test_the_same_notation_used_rightly_still_scores_one(answer: str, gold: str) -> None:
    """A list with an Oxford comma, a product of physical units and a single unit still score one."""
    grade = grade_answer(answer, gold)
    assert grade.score == 1.0, grade.detail


WRONG_REPLIES = [
    ("The answer is \\boxed{42} % of the total.", "a % after the box is shown, not a comment"),
    ("The answer is \\boxed{42}%%.", "a double percent after the box"),
    ("The answer is \\boxed{42} ?", "a question"),
    ("The naive answer is \\boxed{42}.", "the subject names another answer"),
    ("The answer in base 8 is \\boxed{42}.", "the subject changes the answer"),
    ("The square of the answer is \\boxed{42}.", "the subject changes the answer"),
    ("The answer's square is \\boxed{42}.", "the subject changes the answer"),
    ("Alice says the answer is \\boxed{42}.", "someone else's answer"),
    ("For n = 3 the answer is \\boxed{42}.", "a special case"),
    ("Last time the answer was \\boxed{42}.", "an old answer"),
    ("The other answer is \\boxed{42}.", "another answer"),
    ("Answer?: \\boxed{42}", "a label that asks"),
    ("The answer seems to be \\boxed{42}.", "a hedge"),
    ("The answer appears to be \\boxed{42}.", "a hedge"),
    ("The answer may be \\boxed{42}.", "a hedge"),
    ("The answer used to be \\boxed{42}.", "an old answer"),
    ("The distractor is \\boxed{42}.", "a distractor"),
    ("A common trap is \\boxed{42}.", "a trap"),
    ("Only a careless student gets \\boxed{42}.", "a careless answer"),
    ("The extraneous root is \\boxed{42}.", "a rejected root"),
    ("The lower bound is \\boxed{42}.", "a bound"),
    ("The estimate is \\boxed{42}.", "an estimate"),
    ("According to Bob, \\boxed{42}.", "someone else's answer"),
    ("At first glance, \\boxed{42}.", "a first impression"),
    ("Given that n is even, \\boxed{42}.", "a condition"),
    ("Provided n is even, \\boxed{42}.", "a condition"),
    ("Ignoring the constraint gives \\boxed{42}.", "a relaxed problem"),
    ("So far we have \\boxed{42}.", "a partial result"),
    ("The subtotal is \\boxed{42}.", "a partial result"),
    ("Let x = \\boxed{42}.", "a supposition"),
    ("Let the answer be \\boxed{42}.", "a supposition"),
    ("Nah, \\boxed{42}.", "a refusal"),
    ("Answer != $\\boxed{42}$", "not equal, in plain text"),
    ("Answer =/= $\\boxed{42}$", "not equal, in plain text"),
    ("The answer is \\boxed{42}, probably.", "a hedge after the box"),
    ("The answer is \\boxed{42}, give or take one.", "a hedge after the box"),
    ("The answer is \\boxed{42}, or thereabouts.", "a hedge after the box"),
    ("The answer is \\boxed{42}, in theory.", "a hedge after the box"),
    ("The answer is \\boxed{42}, just kidding.", "taken back in the same sentence"),
    ("The answer should be \\boxed{42}, but it is 43.", "taken back in the same sentence"),
    ("The answer was \\boxed{42}, before the correction.", "taken back in the same sentence"),
    ("The answer is \\boxed{42}, namely 43.", "renamed as another value"),
    ("The answer is \\boxed{42}, or equivalently 43.", "renamed as another value"),
    ("The answer is \\boxed{42}, aka 43.", "renamed as another value"),
    ("The answer is \\boxed{42}; equivalently 43.", "renamed as another value"),
    ("Answer: $\\boxed{42}$, etc.", "one of several"),
    ("Answer: $\\boxed{42}$, among others.", "one of several"),
    ("The answer is \\boxed{42}. Just kidding!", "taken back"),
    ("The answer is \\boxed{42}. JK.", "taken back"),
    ("The answer is \\boxed{42}. Nope.", "taken back"),
    ("The answer is \\boxed{42}. On reflection, 43.", "another value after the box"),
    ("The answer is \\boxed{42}. Second thoughts: 43.", "another value after the box"),
    ("The answer is \\boxed{42}. Update: 43.", "another value after the box"),
    ("The answer is \\boxed{42}. Erratum: 43.", "another value after the box"),
    ("The answer is \\boxed{42}. Hold on, 43.", "another value after the box"),
    ("The answer is \\boxed{42}. Then again, 43.", "another value after the box"),
    ("The answer is \\boxed{42}. The correct value: 43.", "another value after the box"),
    ("The answer is \\boxed{42}. PS: the answer is really 43.", "another value after the box"),
    ("The answer is \\boxed{42}. But 43 fits better.", "taken back"),
    ("The answer is \\boxed{42}. I take it back.", "taken back"),
    ("The answer is \\boxed{42}. Nevermind, it is 43.", "taken back"),
    ("The answer is \\boxed{42}. Low confidence.", "left open"),
    ("The answer is \\boxed{42}. Confidence: 10%.", "left open"),
    ("The answer is \\boxed{42}. Rejected.", "taken back"),
    ("Final answer: $\\boxed{42}$\nCorrect: \u2717", "a rejecting mark"),
    ("Final answer: $\\boxed{42}$\nStatus: \u274c", "a rejecting mark"),
    ("\\boxed{42}\n\n~~correct~~", "struck through"),
]

RIGHT_REPLIES = [
    "The answer is \\boxed{42}.",
    "The correct answer to the problem is \\boxed{42}.",
    "So the answer to this question is $\\boxed{42}$.",
    "The answer would be \\boxed{42}.",
    "Janet makes $\\boxed{42}$ dollars.",
    "The answer is \\boxed{42}%.",
    "The answer is \\boxed{42}, that is, 42 dollars.",
    "The answer is \\boxed{42}, which checks out.",
    "The answer is \\boxed{42}.\nCheck: $6 \\times 7 = 42$ \u2713",
    "The answer is $\\boxed{42}$.\n% a note on the layout\n",
    "Hence \\boxed{42}.",
    "\\boxed{42}, so we are done.",
]


def _score(reply: str, gold: str = "42") -> float:
    return grade_answer(extract_final_answer(reply), gold).score


@pytest.mark.parametrize(("reply", "why"), WRONG_REPLIES, ids=[row[0][:50] for row in WRONG_REPLIES])
def test_a_reply_that_does_not_give_the_box_as_its_answer_scores_zero(reply: str, why: str) -> None:
    """A hedge, a renamed value, a question or a retraction around the box is no answer of 42."""
    assert _score(reply) == 0.0, f"{why}: {extract_final_answer(reply)!r}"


@pytest.mark.parametrize("reply", RIGHT_REPLIES)
def test_a_reply_that_gives_the_box_as_its_answer_still_scores_one(reply: str) -> None:
    """Announcing, restating and checking prose around the box keeps the answer."""
    assert _score(reply) == 1.0, extract_final_answer(reply)


values = st.integers(min_value=10, max_value=10**6)
units = st.sampled_from(["m", "kg", "s", "km", "dollars", "USD", "\\$", "apples", "ways", "cm", "hours"])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(values, min_size=2, max_size=4),
    st.sampled_from([",,", ", ,", ";;", ",;", ", , "]),
    st.sampled_from(["({})", "\\{{{}\\}}", "{}"]),
)
def test_two_separators_in_a_row_are_never_a_shorter_list(items: list[int], gap: str, shape: str) -> None:
    """Any list with an empty item scores zero against the list without it."""
    written = shape.format(", ".join(map(str, items[:-1])) + gap + str(items[-1]))
    gold = shape.format(", ".join(map(str, items)))
    assert grade_answer(written, gold).score == 0.0, written


@settings(max_examples=150, deadline=None)
@given(values, units, units)
def test_stacked_units_with_a_currency_count_or_repeat_are_unreadable(value: int, first: str, second: str) -> None:
    """Two units side by side, one of them a currency or counted noun (or the same unit twice), never
    equal the bare number."""
    physical = {"m", "kg", "s", "km", "cm", "hours"}
    written = f"{value}\\text{{ {first} }}{second}" if second != "\\$" else f"{value}\\text{{ {first}}}\\$"
    grade = grade_answer(written, str(value))
    dimension = {"m": "length", "km": "length", "cm": "length", "kg": "mass", "s": "time", "hours": "time"}
    if {first, second} <= physical and dimension[first] != dimension[second]:
        return  # a product of physical units (kg m) is a unit a reader shares
    assert grade.score == 0.0, (written, grade.detail)


_HEDGED_BEFORE = [
    "The naive answer is",
    "The answer in base 8 is",
    "The square of the answer is",
    "Bob says the answer is",
    "The answer seems to be",
    "The answer may be",
    "The distractor is",
    "The lower bound is",
    "According to the key,",
    "Given that n is even,",
    "So far we have",
    "Let x =",
    "Answer?:",
    "Answer !=",
    "The extraneous root is",
    "The estimate is",
]
_HEDGED_AFTER = [
    ", probably.",
    ", give or take one.",
    ", or thereabouts.",
    ", just kidding.",
    ", but it is {o}.",
    ", namely {o}.",
    ", or equivalently {o}.",
    ", aka {o}.",
    "; equivalently {o}.",
    ", etc.",
    " ?",
    " % of the total.",
    "%%.",
    ". Just kidding!",
    ". Nope.",
    ". Update: {o}.",
    ". On reflection, {o}.",
    ". Hold on, {o}.",
    ". Low confidence.",
    ". Rejected.",
    ".\nCorrect: \u2717",
    ".\n\n~~correct~~",
]


@settings(max_examples=200, deadline=None)
@given(values, st.sampled_from(_HEDGED_BEFORE), st.sampled_from(["\\boxed{{{v}}}", "$\\boxed{{{v}}}$"]))
def test_a_hedged_or_qualified_subject_before_the_box_makes_it_unreadable(value: int, before: str, box: str) -> None:
    """A subject that names another answer, or a hedge before the box, leaves no answer."""
    reply = f"{before} {box.format(v=value)}."
    assert _score(reply, str(value)) == 0.0, extract_final_answer(reply)


@settings(max_examples=200, deadline=None)
@given(values, st.integers(min_value=1, max_value=9), st.sampled_from(_HEDGED_AFTER))
def test_a_hedge_rename_or_retraction_after_the_box_makes_it_unreadable(value: int, step: int, after: str) -> None:
    """A hedge, another value named for the box, or a retraction after it leaves no answer."""
    reply = f"The answer is $\\boxed{{{value}}}${after.format(o=value + step)}"
    assert _score(reply, str(value)) == 0.0, extract_final_answer(reply)


@settings(max_examples=100, deadline=None)
@given(
    values,
    st.sampled_from(
        [
            ".",
            ", which is the final answer.",
            ", that is, {v} dollars.",
            ".\nCheck: $ {v} = {v}$.",
            "%.",
            ".\n\nI hope it is correct.",
        ]
    ),
)
def test_announcing_or_restating_after_the_box_keeps_it(value: int, after: str) -> None:
    """A closing phrase, a restatement or a check after the box keeps the answer."""
    reply = f"The answer is $\\boxed{{{value}}}${after.format(v=value)}"
    assert _score(reply, str(value)) == 1.0, extract_final_answer(reply)
