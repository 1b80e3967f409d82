"""Closing styles a third writer used, blind to the grader, and what still refuses around them.

Of that writer's 807 right replies with a box or an answer block, 259 were refused when first measured: endings in
Italian, Portuguese, Japanese and Korean; worked steps that box each step's result before a labelled final box;
an exact answer followed by its decimal (``\\boxed{-\\sqrt{3}} \\approx -1.732``); an align block's
``\\text{the required value} &= \\boxed{720}``; a check mark before ``Final Answer:``. Each is read now, and each
test here also pins what must still refuse: a denial in the same language, a step boxed as an answer, a decimal
that disagrees, a cross before the label.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handlers.grading import grade_answer
from tests.grading.support import graded

ANNOUNCING = [
    "Risposta: $\\boxed{42}$", "Pertanto la risposta finale è $\\boxed{42}$.", "Quindi, il risultato è $\\boxed{42}$.",
    "Logo, a resposta final é $\\boxed{42}$.", "Portanto, o resultado é $\\boxed{42}$.", "Resposta: $\\boxed{42}$",
    "したがって、答えは $\\boxed{42}$ です。", "よって、求める値は $\\boxed{42}$ となります。",
    "答え\uff1a$\\boxed{42}$",
    "그러므로 최종 답은 $\\boxed{42}$ 입니다.", "정답: $\\boxed{42}$", "따라서 답은 $\\boxed{42}$ 입니다.",
    "答\uff1a$\\boxed{42}$", "### \u2705 Final Answer:\n\\( \\boxed{42} \\)", "\u2705 Final Answer: $\\boxed{42}$",
    "\u27a1\ufe0f $\\boxed{42}$", "Hence\n\\begin{align*}\n\\text{the required value} &= \\boxed{42}.\n\\end{align*}",
    "Hence\n\\begin{align*}\n\\text{the answer} &= \\boxed{42}.\n\\end{align*}",
]
DENYING = [
    "Risposta sbagliata: $\\boxed{42}$", "La risposta non è $\\boxed{42}$.", "Forse la risposta è $\\boxed{42}$.",
    "A resposta não é $\\boxed{42}$.", "Talvez a resposta seja $\\boxed{42}$.",
    "答えは $\\boxed{42}$ ではありません。", "答えはたぶん $\\boxed{42}$ です。",
    "답은 $\\boxed{42}$ 이 아닙니다.", "아마 답은 $\\boxed{42}$ 입니다.",
    "\u274c Final Answer: $\\boxed{42}$", "\\begin{align*}\n\\text{not the answer} &= \\boxed{42}.\n\\end{align*}",
    "\\begin{align*}\n\\text{a lower bound} &= \\boxed{42}.\n\\end{align*}",
]


@pytest.mark.parametrize("reply", ANNOUNCING)
def test_endings_in_four_more_languages_marks_and_align_blocks_announce_the_box(reply: str) -> None:
    """Each announces the box: 1."""
    assert graded("We compute step by step.\n\n" + reply) == 1.0, reply


@pytest.mark.parametrize("reply", DENYING)
def test_the_same_endings_with_a_denial_a_hedge_or_a_cross_still_refuse(reply: str) -> None:
    """A word the closed lists do not hold, a denial or a cross: 0."""
    assert graded("We compute step by step.\n\n" + reply) == 0.0, reply


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 999), st.integers(1, 999)), min_size=1, max_size=4),
       st.integers(1, 9999), st.sampled_from(["**Final answer:** $\\boxed{{{v}}}$", "Final answer: \\boxed{{{v}}}",
                                              "### Final Answer\n\n$\\boxed{{{v}}}$"]))
def test_boxed_step_results_before_a_labelled_final_box_leave_the_final_one(
    steps: list[tuple[int, int]], final: int, label: str,
) -> None:
    """``$64+30+48 = \\boxed{142}$`` ... ``**Final answer:** $\\boxed{1218}$``: the labelled box is the answer."""
    worked = "\n\n".join(f"**Step {i}.** ${a} + {b} = \\boxed{{{a + b}}}$" for i, (a, b) in enumerate(steps, 1))
    reply = f"Let me compute each quantity.\n\n{worked}\n\n{label.format(v=final)}"
    assert graded(reply, gold=str(final)) == 1.0, reply
    assert graded(reply, gold=str(final + 1)) == 0.0, reply


def test_boxes_that_each_state_an_answer_stay_a_hedge_under_a_final_label() -> None:
    """``The answer is \\boxed{41}`` then ``Final answer: \\boxed{42}``; or no final label: 0."""
    assert graded("The answer is \\boxed{41}.\n\n**Final answer:** \\boxed{42}") == 0.0
    assert graded("$6 \\times 7 = \\boxed{41}$\n\nSo we get \\boxed{42}.") == 0.0


EXACT = [("\\sqrt{{{n}}}", lambda n: math.sqrt(n)), ("-\\sqrt{{{n}}}", lambda n: -math.sqrt(n)),
         ("\\frac{{{n}}}{{7}}", lambda n: n / 7), ("{n}\\pi", lambda n: n * math.pi)]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(EXACT), st.integers(2, 300), st.integers(1, 6), st.sampled_from(["round", "cut", "off"]))
def test_an_exact_answer_beside_its_decimal_is_the_exact_answer(exact, n: int, places: int, how: str) -> None:
    """``\\boxed{-\\sqrt{3}} \\approx -1.732``: the exact value when the decimal agrees with it, rounded or cut to
    its last place; a decimal off by a unit or more leaves the relation, which equals no number."""
    text, value = exact[0].format(n=n), exact[1](n)
    if abs(value * 10**places - round(value * 10**places)) < 1e-6:
        return  # the decimal would be exact: not this case
    if how == "round":
        decimal = round(value, places)
    elif how == "cut":
        decimal = math.trunc(value * 10**places) / 10**places
    else:
        decimal = round(value, places) + 2 * 10**-places
    shown = f"{decimal:.{places}f}"
    if not shown.split(".")[1].strip("0"):
        return  # "15.0" reads as a whole number, with no places to compare at: the relation stays (0)
    expected = 0.0 if how == "off" else 1.0
    assert grade_answer(f"{text} \\approx {shown}", text).score == expected, (text, shown)


def test_a_decimal_beside_a_decimal_or_a_variable_is_not_read_as_the_exact_value() -> None:
    """``x \\approx 1.414`` and ``1.41 \\approx 1.4`` stay relations: 0 against any number."""
    assert grade_answer("x \\approx 1.414", "\\sqrt{2}").score == 0.0
    assert grade_answer("1.41 \\approx 1.4", "1.41").score == 0.0
    assert Fraction(1, 3) != 0.333  # the cut decimal is not the value itself, only consistent with it


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 10**6), st.sampled_from(["dollars ", "apples ", ""]),
       st.sampled_from(["in total", "in all", "altogether", "total"]))
def test_in_total_after_the_box_and_its_unit_says_nothing_more(value: int, unit: str, words: str) -> None:
    """``That comes to $\\boxed{32}$ dollars in total.``: 1; with a denial after it (``, not counting tax``): 0."""
    reply = f"That comes to $\\boxed{{{value}}}$ {unit}{words}."
    assert graded(reply, gold=str(value)) == 1.0, reply
    assert graded(reply[:-1] + ", not counting tax.", gold=str(value)) == 0.0, reply


@settings(max_examples=80, deadline=None)
@given(st.integers(1000, 10**7), st.booleans())
def test_a_restatement_with_digit_groups_is_the_same_answer(value: int, before: bool) -> None:
    """``The answer is 1,940.`` beside ``\\boxed{1940}`` restates it; ``1,941`` gives another answer: 0."""
    grouped, other = f"{value:,}", f"{value + 1:,}"
    for said, expected in ((grouped, 1.0), (other, 0.0)):
        reply = (f"The answer is ${said}$. The answer is $\\boxed{{{value}}}$." if before
                 else f"The answer is $\\boxed{{{value}}}$. The answer is {said}.")
        assert graded(reply, gold=str(value)) == expected, reply
