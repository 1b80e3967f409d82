"""A tenth and an eleventh attacker, told the documented rules and not the code: wrong replies that scored 1.

The tenth wrote 1,644 in 13 classes (a box hidden in a ``comment`` or ``verbatim`` environment, a later value
wrapped in ``\\textbf``, scare quotes, asides such as ``IIRC``, later sentences that say the problem has no
answer...). The eleventh aimed 2,173 at this session's relaxations for a fourth writer's replies: hedges and
"or 43" written in the newly read languages, a sign before a pointer mark, a quoted question about the answer.
Each class is generated here over several golds, beside right replies that must keep their box.
"""

from __future__ import annotations

import itertools

import pytest

from tests.grading.support import graded

GOLDS = [("42", "43"), ("7", "8"), ("\\frac{3}{4}", "\\frac{1}{4}"), ("-5", "5")]
"""(gold, another value)"""
ENVIRONMENTS = ["comment", "verbatim", "minted}{latex", "lstlisting", "hide", "filecontents"]


@pytest.mark.parametrize(("environment", "golds"), list(itertools.product(ENVIRONMENTS, GOLDS)))
def test_a_box_in_an_environment_never_typeset_is_not_the_answer(environment: str, golds: tuple[str, str]) -> None:
    """``\\begin{comment}\\boxed{42}\\end{comment}`` under ``The answer is $43$.`` is no answer of 42."""
    gold, other = golds
    name = environment.split("}")[0]
    reply = f"So the answer is ${other}$.\n\n\\begin{{{environment}}}\n\\boxed{{{gold}}}\n\\end{{{name}}}"
    assert graded(reply, gold) == 0.0


WRAPPERS = ["\\textbf{{{}}}", "\\emph{{${}$}}", "{{\\Large {}}}", "{{\\bf {}}}", "<strong>{}</strong>",
            "<mark>{}</mark>", "\\underline{{{}}}", "\\colorbox{{yellow}}{{{}}}", "\\fcolorbox{{red}}{{white}}{{{}}}"]
LATER_LEADS = ["Final: ", "Hence ", "So it's really ", "Answer: "]


@pytest.mark.parametrize(("wrapper", "lead", "golds"), list(itertools.product(WRAPPERS, LATER_LEADS, GOLDS[:2])))
def test_a_later_value_in_a_formatting_command_takes_the_box_back(wrapper: str, lead: str,
                                                                 golds: tuple[str, str]) -> None:
    """``Final: \\textbf{43}`` after ``\\boxed{42}`` is another final value, however it is drawn."""
    gold, other = golds
    assert graded(f"The answer is $\\boxed{{{gold}}}$.\n\n{lead}{wrapper.format(other)}", gold) == 0.0


@pytest.mark.parametrize("wrapper", WRAPPERS[:5])
def test_a_later_formatted_restatement_keeps_the_box(wrapper: str) -> None:
    """``Final: \\textbf{42}`` restates the box."""
    assert graded(f"The answer is $\\boxed{{42}}$.\n\nFinal: {wrapper.format(42)}") == 1.0


@pytest.mark.parametrize(("numeral", "score"), [("XLIII", 0.0), ("XLI", 0.0), ("XLII", 1.0), ("LXX", 0.0)])
def test_a_later_roman_numeral_is_read_as_a_value(numeral: str, score: float) -> None:
    """``Final: XLIII`` after ``\\boxed{42}`` states 43; ``XLII`` restates 42."""
    assert graded(f"The answer is $\\boxed{{42}}$.\n\nFinal: {numeral}") == score


@pytest.mark.parametrize("reply", [
    'The "answer" is $\\boxed{42}$.', "The \u201ccorrect\u201d answer is $\\boxed{42}$.",
    "Therefore, my 'solution' gives $\\boxed{42}$.", "The answer, IIRC, is $\\boxed{42}$.",
    "The final answer, off the top of my head, is $\\boxed{42}$.", "The total, going by gut feeling, is $\\boxed{42}$.",
    "The final answer (I'd wager) is $\\boxed{42}$.", "The answer (modulo typos) is $\\boxed{42}$.",
])
def test_quotes_and_asides_around_the_announcement_refuse(reply: str) -> None:
    """A so-called answer, and an aside that hedges it, are not positive evidence."""
    assert graded(reply) == 0.0


@pytest.mark.parametrize("reply", [
    "The answer, therefore, is $\\boxed{42}$.", "The answer, of course, is $\\boxed{42}$.",
    "The total, as computed above, is $\\boxed{42}$.", "**Final answer (answer box):** $\\boxed{42}$",
    "The answer is $\\boxed{42}$.",
])
def test_plain_asides_keep_the_box(reply: str) -> None:
    """``therefore``, ``of course`` and ``as computed above`` only announce."""
    assert graded(reply) == 1.0


LATER_WRONG = [
    "The hypotheses cannot be met simultaneously.", "Strictly, the data are inconsistent and nothing satisfies them.",
    "Such a configuration is impossible.", "The premises are mutually incompatible.",
    "On second look, option (C) is right.", "I switch my choice to (C).", "On reflection I'd pick B.",
    "Remember to subtract the empty set.", "Exclude the trivial solution.", "Drop the case $n = 0$ from this count.",
    "The last case should be excluded.", "Take it with a grain of salt.", "Don't quote me on that.", "_Not final._",
]
ENDINGS = ["The answer is $\\boxed{42}$.", "**Final answer:** $\\boxed{42}$", "$$\\boxed{42}$$"]


@pytest.mark.parametrize(("ending", "later"), list(itertools.product(ENDINGS, LATER_WRONG)))
def test_later_sentences_that_disown_or_adjust_the_box_take_it_back(ending: str, later: str) -> None:
    """No answer exists, another choice is made, an adjustment is left to do, or the writer disowns the box."""
    assert graded(f"{ending}\n\n{later}") == 0.0


@pytest.mark.parametrize("later", ["Double-checking the arithmetic once more confirms this result.",
                                   "Check: $6 \\times 7 = 42$."])
def test_later_checks_keep_the_box(later: str) -> None:
    """A check that confirms is not an adjustment."""
    assert graded(f"The answer is $\\boxed{{42}}$. {later}") == 1.0


@pytest.mark.parametrize("reply", [
    "The answer is $\\boxed{42}$, within a factor of two.", "So $x = \\boxed{42}$, to within a few units.",
    "Hence $\\boxed{42}$ is the required value, halved.", "Hence $\\boxed{42}$ is the required value, at best.",
    "Up to sign, the answer is $\\boxed{42}$.", "To first order, we get $\\boxed{42}$.",
    "Up to a constant, the final answer is $\\boxed{42}$.", "Up to a power of ten, the answer is $\\boxed{42}$.",
    "The final answer is $\\boxed{42}$ \u2014 in a parallel universe.",
    "The answer is $\\boxed{42}$ \u2014 for a different problem entirely.",
    "The answer is $\\boxed{42}$ \u2014 said the overconfident student.",
])
def test_bounds_approximations_and_counterfactuals_around_the_box_refuse(reply: str) -> None:
    """Each narrows the box to an approximation, a transform or another problem."""
    assert graded(reply) == 0.0


FOREIGN_AFTER_COMMA = ["kanske", "denk ik", "misschien", "chyba", "prawdopodobnie", "belki", "muhtemelen", "mungkin",
                       "kira-kira", "c\u00f3 l\u1ebd", "\u043c\u043e\u0436\u043b\u0438\u0432\u043e",
                       "\u0631\u0628\u0645\u0627", "\u0936\u093e\u092f\u0926", "eller $43$", "atau $43$", "albo $43$",
                       "ya da $43$", "ho\u1eb7c $43$", "om n \u00e4r j\u00e4mnt"]
ANNOUNCED = ["The answer is $\\boxed{42}$", "Svaret \u00e4r allts\u00e5 $\\boxed{42}$",
             "Jadi, jawabannya adalah $\\boxed{42}$", "The answer is $\\boxed{42}$ \U0001f44d",
             "Hence $\\boxed{42}$ is the required value"]


@pytest.mark.parametrize(("announced", "hedge"), list(itertools.product(ANNOUNCED, FOREIGN_AFTER_COMMA)))
def test_a_hedge_or_another_value_after_the_box_in_another_language_refuses(announced: str, hedge: str) -> None:
    """``\\boxed{42}, kanske.`` (maybe) and ``\\boxed{42}, atau $43$.`` (or 43): reading a language's announcement
    means reading its hedges too."""
    assert graded(f"{announced}, {hedge}.") == 0.0


@pytest.mark.parametrize(("doubt", "announced"), list(itertools.product(
    ["Jag gissar bara.", "Zgaduj\u0119.", "Dit is een ondergrens.", "A\u015fa\u011f\u0131daki sonu\u00e7 hatal\u0131.",
     "\u0426\u0435 \u043b\u0438\u0448\u0435 \u0437\u0434\u043e\u0433\u0430\u0434\u043a\u0430.",
     "\u0644\u0633\u062a \u0645\u062a\u0623\u0643\u062f\u0627.", "Hasil di bawah ini salah."],
    ["The answer is $\\boxed{42}$.", "Svaret \u00e4r allts\u00e5 $\\boxed{42}$."])))
def test_a_doubt_in_another_language_before_the_box_refuses(doubt: str, announced: str) -> None:
    """``Jag gissar bara.`` (I am only guessing) right before the box is the box's doubt."""
    assert graded(f"{doubt} {announced}") == 0.0


@pytest.mark.parametrize("lead", ["Voor deel (a),", "Untuk bagian (a),", "Paling sedikit,", "N\u1ebfu n ch\u1eb5n,"])
def test_a_lead_clause_in_another_language_refuses(lead: str) -> None:
    """``Untuk bagian (a), the answer is`` (for part (a)) narrows the box, in whatever language."""
    assert graded(f"{lead} the answer is $\\boxed{{42}}$.") == 0.0


@pytest.mark.parametrize(("sign", "mark"), list(itertools.product(
    ["$x = -$", "$x \\ge$", "$n >$", "$x = 1 +$", "$x = \\frac{1}{2}\\cdot$"],
    ["\U0001f3af", "\U0001f4cc", "\u27a1\ufe0f", "\u2234", "$\\therefore$", "\u2705", "\u2728"])))
def test_a_mark_between_a_sign_and_the_box_does_not_part_them(sign: str, mark: str) -> None:
    """``So $x = -$ \U0001f3af $\\boxed{42}$`` is -42, however the mark points."""
    assert graded(f"So {sign} {mark} $\\boxed{{42}}$.") == 0.0


@pytest.mark.parametrize("reply", [
    'So, answering the question "What is one less than the answer?": the answer is $\\boxed{42}$.',
    'The answer to the question "What is the answer minus one?" is $\\boxed{42}$.',
    'So, answering the question "What was my first, rejected guess?": the answer is $\\boxed{42}$.',
    'The answer to the question "What number did I get before finding my mistake?" is $\\boxed{42}$.',
    "The answer is $\\boxed{42}$. If any step above is unclear (the last one is wrong), let me know.",
    "The answer is $\\boxed{42}$. Let me know if you would like to see why it is wrong.",
])
def test_a_quoted_question_about_the_answer_or_an_offer_that_takes_it_back_refuses(reply: str) -> None:
    """A quote that asks about the answer is read, and an offer to explain that calls the box wrong is a denial."""
    assert graded(reply) == 0.0
