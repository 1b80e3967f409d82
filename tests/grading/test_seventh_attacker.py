"""A seventh attacker, who read docs/grading.md but not the code, and an unseen set of right replies.

Wrong replies that scored 1 (about 9,000 generated, /tmp/attack7 in the session that closed them):

- an abbreviation's full stop ended the sentence before the box, so its hedge was never read:
  ``The answer is approx. \\boxed{42}``, ``ca.``, ``est.``, ``max.``, ``vs.``, ``to 2 s.f.``;
- a short later sentence gave another value in words off the lists: ``It's 43.``, ``I meant 43.``,
  ``Python says 43.``, ``Method 2 gives $43$.``;
- a later sentence said the box is not yet what was asked, or withdrew it: ``This double-counts.``,
  ``Mod 100.``, ``That was part (a).``, ``Placeholder.``, ``I gave up here.``, ``Step 2 fails.``;
- a Markdown heading or a bold line over the box labelled it as something else: ``### Draft``;
- a label, then a hedging "to be": ``Answer: expected to be \\boxed{42}``;
- the box stated as a rounding: ``Rounding to the nearest integer gives \\boxed{42}``;
- a doubt in the sentence right before the box's: ``I am not sure about this one.``

An unseen set of 1,500 right replies in 30 model styles (written without reading the grader) showed what
the rules refused wrongly, and some is mended here: a line that ends complete (``... = 3360 points``) no
longer runs on into the box's sentence because it holds ``if`` or ``third`` somewhere, even across a blank
line; a closing courtesy (``Hope that helps!``) and a tutor's question (``Does that make sense?``) after the
box keep it; ``Double-check`` is not doubling; ``exactly``, ``we conclude``, ``Putting it together:`` announce.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handlers.grading import grade_answer
from tests.grading.support import graded

BOX = "The answer is $\\boxed{42}$. "

WRONG = [
    "The answer is approx. $\\boxed{42}$.",
    "Therefore, the final answer is max. \\boxed{42}",
    "So the total comes to est. $\\boxed{42}$.",
    "The answer is 43 vs. \\boxed{42}.",
    "So the final answer is: to 2 s.f. $\\boxed{42}$",
    BOX + "It's 43.",
    BOX + "I meant 43.",
    BOX + "Python says 43.",
    BOX + "The box above should read 43.",
    BOX + "(or 43)",
    BOX + "Verifying: substituting back gives $43$.",
    BOX + "**Method 2:** the count is $43$.",
    BOX + "This double-counts.",
    BOX + "Minus one for the empty set.",
    BOX + "+1 for the empty set.",
    BOX + "This still has to be multiplied by 3.",
    BOX + "This is the radius; the diameter is twice that.",
    BOX + "Mod 100.",
    BOX + "In thousands of dollars.",
    BOX + "That was part (a).",
    BOX + "The above holds only for n = 3.",
    BOX + "Placeholder.",
    BOX + "Needs review.",
    BOX + "Units: thousands.",
    BOX + "Step 2 is bogus.",
    BOX + "This is the number of subsets, not the number of elements.",
    BOX + "Coin flip.",
    BOX + "Confidence: low.",
    BOX + "I gave up here.",
    BOX + "There is a flaw in step 2.",
    BOX + "The exact value is 41.7.",
    BOX + "I hope this is right.",
    BOX + "Is it?",
    "### Draft\n$\\boxed{42}$",
    "### Student's answer\n\n\\[\\boxed{42}\\]",
    "**Numerator**\n\\[\\boxed{42}\\]",
    "Answer: expected to be $\\boxed{42}$",
    "So the final answer is: thought to be \\boxed{42}",
    "Rounding to the nearest integer gives $\\boxed{42}$.",
    "The answer is, to 2 significant figures, $\\boxed{42}$.",
    "Taking the floor gives $\\boxed{42}$.",
    "I am not sure about this one.\n\\boxed{42}",
    "This might be wrong. The answer is \\boxed{42}.",
    "The answer is not\n\n$\\boxed{42}$",
    "The answer is at most\n$$\\boxed{42}$$",
    "Wrongly, we get\n\n\\boxed{42}",
]

RIGHT = [
    "By Fig. 2, the answer is $\\boxed{42}$.",
    "The answer is exactly \\boxed{42}.",
    BOX + "It's 42.",
    BOX + "Method 2 gives $42$ as well.",
    BOX + "Sanity check: substituting back gives $42$.",
    BOX + "Check: $6 \\times 7 = 42$.",
    BOX + "This counts each pair once.",
    BOX + "No further step is needed.",
    BOX + "Confidence: high.",
    BOX + "Hope that helps! Feel free to ask if anything is unclear.",
    BOX + "Double-checking the arithmetic once more confirms this result.",
    BOX + "See how breaking it into steps made it manageable?",
    BOX + "Does that make sense?",
    "### Final Answer\n$\\boxed{42}$",
    "## Answer\n\n\\[\\boxed{42}\\]",
    "**Final Answer**\n\\[\\boxed{42}\\]",
    "### Conclusion\n\\[\\boxed{42}\\]",
    "So we conclude $$\\boxed{42}$$",
    "Putting it together:\n\n\\[\\boxed{42}\\]",
    "There is no doubt. The answer is \\boxed{42}.",
    "If Ara scores 21 points a game, she has 2*21 = 42 points\n\n**Answer:** $\\boxed{42}$",
    "Third Bag:300/2=150\nTotal: 42 apples\n\nSo the answer is $\\boxed{42}$.",
    "She has $40.00 - $27.00 = $13.00 left from the initial $55\n\nTherefore, the answer is:\n\n\\[\n\\boxed{42}\n\\]",
]


@pytest.mark.parametrize("reply", WRONG)
def test_the_seventh_attackers_replies_score_zero(reply: str) -> None:
    """Each pinned wrong reply scores 0."""
    assert graded(reply) == 0.0


@pytest.mark.parametrize("reply", RIGHT)
def test_right_replies_in_the_same_notation_keep_one(reply: str) -> None:
    """The same notation used rightly scores 1."""
    assert graded(reply) == 1.0


values = st.integers(min_value=-10**6, max_value=10**6)
abbreviations = st.sampled_from(["approx.", "Approx.", "ca.", "est.", "apx.", "appr.", "abt.", "max.", "min.",
                                 "avg.", "prob.", "poss.", "to 2 s.f.", "to 3 sig. figs."])
announcements = st.sampled_from(["The answer is {a} $\\boxed{{{v}}}$.", "So the total comes to {a} \\boxed{{{v}}}",
                                 "{a} $\\boxed{{{v}}}$", "Final answer: {a} \\boxed{{{v}}}"])


@settings(max_examples=150, deadline=None)
@given(values, abbreviations, announcements)
def test_an_abbreviated_hedge_is_read_with_the_box(value: int, abbreviation: str, announcement: str) -> None:
    """Generated abbreviations with a full stop before the box score 0."""
    reply = announcement.format(a=abbreviation, v=value)
    assert graded(reply, str(value)) == 0.0, reply


second_values = st.sampled_from(["It's {w}.", "Or {w}.", "Also {w}.", "I meant {w}.", "Namely {w}.",
                                 "It must be ${w}$.",
                                 "Recomputing gives {w}.", "Another method gives ${w}$.", "The simulation gives {w}.",
                                 "The code prints {w}.", "Really {w}.", "Change it to {w}.", "Replace it with {w}.",
                                 "(or {w})", "Plugging in gives {w}.", "Counting the complement gives ${w}$."])


@settings(max_examples=200, deadline=None)
@given(values, values, second_values, st.sampled_from([" ", "\n\n"]))
def test_a_short_later_sentence_ending_on_another_value_makes_the_answer_unreadable(value: int, other: int,
                                                                                    later: str, gap: str) -> None:
    """Generated short sentences after the box that end on a value the box does not hold score 0."""
    if other == value:
        other += 1
    reply = f"The answer is $\\boxed{{{value}}}$.{gap}{later.format(w=other)}"
    assert graded(reply, str(value)) == 0.0, reply


@settings(max_examples=150, deadline=None)
@given(values, second_values, st.sampled_from([" ", "\n\n"]))
def test_the_same_sentence_ending_on_the_box_keeps_it(value: int, later: str, gap: str) -> None:
    """Generated sentences that end on the box's own value keep 1 (or score 0 only for their words)."""
    reply = f"The answer is $\\boxed{{{value}}}$.{gap}{later.format(w=value)}"
    if later.startswith(("Or", "(or", "Change", "Replace", "Really")):
        return  # their words take the box back whatever value follows
    assert graded(reply, str(value)) == 1.0, reply


headings = st.sampled_from(["Draft", "Unverified", "Attempt 1 (failed)", "Scratch work", "Example", "Hint",
                            "Student's answer", "What the key says", "Numerator", "Before simplifying", "Old answer",
                            "Lower bound", "Guess"])


@settings(max_examples=150, deadline=None)
@given(values, headings, st.sampled_from(["### {h}\n$\\boxed{{{v}}}$", "## {h}\n\n\\[\\boxed{{{v}}}\\]",
                                          "**{h}**\n\\[\\boxed{{{v}}}\\]"]))
def test_a_heading_over_the_box_must_announce_it(value: int, heading: str, layout: str) -> None:
    """Generated headings and bold lines that name something else label the box: 0."""
    reply = layout.format(h=heading, v=value)
    assert graded(reply, str(value)) == 0.0, reply


@settings(max_examples=100, deadline=None)
@given(values, st.sampled_from(["expected", "believed", "rumored", "rumoured", "thought", "said", "predicted",
                                "going", "yet", "supposed"]),
       st.sampled_from(["Answer:", "Final answer:", "So the final answer is:"]))
def test_a_label_then_a_hedging_to_be_scores_zero(value: int, verb: str, label: str) -> None:
    """Generated "Answer: expected to be" and the like score 0."""
    reply = f"{label} {verb} to be $\\boxed{{{value}}}$"
    assert graded(reply, str(value)) == 0.0, reply


WRONG_ANSWERS = [
    ("x = x^3+3x-6", "x^3+3x-6"),
    ("k = 2k+2", "2k+2"),
    ("n = 8n^2+4n+1", "8n^2+4n+1"),
    ("x = \\cot x", "\\cot x"),
    ("\\sin\\pi/6", "0"),
    ("\\cos 2\\pi/3", "\\frac13"),
    ("9^1/2", "\\frac92"),
    ("\\log_2 16/4", "1"),
    ("30^\\circ\\text{C}", "\\frac{\\pi}{6}"),
    ("a_{n+1} = 8n^2+4n+1", "8n^2+4n+1"),
    ("E_{v+1} = v+1", "v+1"),
    ("a_{2n} = 8n^2", "8n^2"),
]

RIGHT_ANSWERS = [
    ("y = x^3+3x-6", "x^3+3x-6"),
    ("f(x) = x^3+3x-6", "x^3+3x-6"),
    ("\\sin\\frac{\\pi}{6}", "\\frac12"),
    ("9^{1/2}", "3"),
    ("\\log_2\\frac{16}{4}", "2"),
    ("\\sin(x)/2", "\\frac{\\sin x}{2}"),
    ("x^2/2", "\\frac{x^2}{2}"),
    ("30^\\circ", "\\frac{\\pi}{6}"),
    ("a_n = 8n^2+4n+1", "8n^2+4n+1"),
    ("E_{v} = v+1", "v+1"),
    ("x_1 = 5", "5"),
]


@pytest.mark.parametrize(("answer", "gold"), WRONG_ANSWERS)
def test_the_seventh_attackers_answers_score_zero(answer: str, gold: str) -> None:
    """A name in its own value, a function or first power before a slash, a degree before a unit: 0."""
    assert grade_answer(answer, gold).score == 0.0


@pytest.mark.parametrize(("answer", "gold"), RIGHT_ANSWERS)
def test_the_same_notation_read_safely_keeps_one(answer: str, gold: str) -> None:
    """A fresh name, a bracketed argument, a braced exponent, a bare degree: 1."""
    assert grade_answer(answer, gold).score == 1.0


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["x", "k", "n", "r", "t"]), st.integers(min_value=1, max_value=9),
       st.integers(min_value=1, max_value=9))
def test_any_name_in_its_own_value_is_an_equation(name: str, coefficient: int, constant: int) -> None:
    """Generated ``v = a v^2 + b``: never equal to the expression ``a v^2 + b``."""
    value = f"{coefficient}{name}^2 + {constant}"
    assert grade_answer(f"{name} = {value}", value).score == 0.0
    assert grade_answer(f"y_0 = {value}", value).score == 1.0


TABLE = "| # | Work | Value |\n|:-:|---|---|\n| 1 | Set up the conditions | equations above |\n"


@pytest.mark.parametrize(("row", "score"), [
    ("| 2 | **Final answer** | $\\boxed{42}$ |", 1.0),
    ("| 2 | Result | $\\boxed{42}$ |", 1.0),
    ("| 2 | Guess | $\\boxed{42}$ |", 0.0),
    ("| Wrong | Final answer | $\\boxed{42}$ |", 0.0),
    ("| 2 | Final answer | $\\boxed{42}$ | not verified |", 0.0),
    ("| 2 | Final answer | $\\boxed{42}$ | 43 |", 0.0),
])
def test_a_box_in_a_table_row_is_labelled_by_the_cell_before_it(row: str, score: float) -> None:
    """A Markdown table's last row: the cell before the box must announce it; every cell is read."""
    assert graded(TABLE + row) == score


@pytest.mark.parametrize(("reply", "score"), [
    ("\u041e\u0442\u0432\u0435\u0442, \u0432\u043e\u0437\u043c\u043e\u0436\u043d\u043e, \\boxed{42}.", 0.0),
    ("Vielleicht, \\boxed{42}", 0.0),
    ("Peut-\u00eatre, \\boxed{42}", 0.0),
    (BOX + "Mais je ne suis pas s\u00fbr.", 0.0),
    (BOX + "Aber ich bin nicht sicher.", 0.0),
    (BOX + "Warte, es ist 43.", 0.0),
    ("In conclusion, \\boxed{42}", 1.0),
    ("Finally, \\boxed{42}.", 1.0),
    ("So, \\boxed{42}", 1.0),
    (BOX + "Jos\u00e9 ends up with 42 cards.", 1.0),
])
def test_words_in_other_languages_are_not_taken_for_announcements(reply: str, score: float) -> None:
    """A hedge in another language set off before the box, or doubt after it, scores 0; English closings keep 1."""
    assert graded(reply) == score


@pytest.mark.parametrize(("reply", "score"), [
    ("**Endergebnis:** $\\boxed{42}$", 1.0),
    ("Somit ist das Ergebnis $\\boxed{42}$.", 1.0),
    ("La r\u00e9ponse est donc $\\boxed{42}$.", 1.0),
    ("**R\u00e9ponse finale :** $\\boxed{42}$", 1.0),
    ("Por lo tanto, la respuesta es $\\boxed{42}$.", 1.0),
    ("\u0422\u0430\u043a\u0438\u043c \u043e\u0431\u0440\u0430\u0437\u043e\u043c, "
     "\u043e\u0442\u0432\u0435\u0442 $\\boxed{42}$.", 1.0),
    ("\u6240\u4ee5\u6700\u7ec8\u7b54\u6848\u4e3a $\\boxed{42}$\u3002", 1.0),
    ("La r\u00e9ponse n'est pas $\\boxed{42}$.", 0.0),
    ("La r\u00e9ponse est peut-\u00eatre $\\boxed{42}$.", 0.0),
    ("Si x = 2, la r\u00e9ponse est $\\boxed{42}$.", 0.0),
    ("Die Antwort ist nicht $\\boxed{42}$.", 0.0),
    ("\u7b54\u6848\u4e0d\u662f $\\boxed{42}$\u3002", 0.0),
    ("La r\u00e9ponse est $\\text{pas}$ \\boxed{42}", 0.0),
    ("La r\u00e9ponse est $\\boxed{42}$. Non, 43.", 0.0),
    ("\u6240\u4ee5\u6700\u7ec8\u7b54\u6848\u4e3a $\\boxed{42}$\u3002\u4e0d\u5bf9\u3002", 0.0),
])
def test_whole_announcing_sentences_in_five_other_languages_are_read(reply: str, score: float) -> None:
    """A sentence that is wholly an announcement in French, German, Spanish, Russian or Chinese announces the box;
    any other word in it (a denial, a hedge, a condition, a formula) leaves it unreadable."""
    assert graded(reply) == score


@pytest.mark.parametrize(("answer", "gold", "score"), [
    ("1.2\\text{ arcsec}", "1.2", 1.0),
    ("3.83 \\times 10^{35}\\text{ erg/s}", "3.83e35", 1.0),
    ("100\\text{ pc}", "100", 1.0),
    ("927.5\\text{ kJ/mol}", "927.5", 1.0),
    ("4100\\text{ \\AA}", "4100", 1.0),
    ("4100\\text{ \u00c5}", "4100", 1.0),
    ("1.2\\text{ arcsec}", "1.3", 0.0),
    ("4100\\text{ \\AAx}", "4100", 0.0),
    ("1\\text{ \\AA}", "1\\text{ nm}", 0.0),
])
def test_astronomy_and_chemistry_units_are_read(answer: str, gold: str, score: float) -> None:
    """Arcseconds, ergs, parsecs, moles and angstroms after a number are units (an angstrom is not a nanometre)."""
    assert grade_answer(answer, gold).score == score
